// Command agentbox builds a verified sandbox around an AI coding agent.
//
// This package only wires: it maps each subcommand's flags to the inputs
// of the package that does the work (a launcher.Config for run, selftest
// and spec; audit, compose, doctor, the ledger and the trust store for the
// others), prints what comes back, and maps every error to the exit codes
// of DESIGN.md §5 with one mapper, launcher.ExitCode. Each subcommand
// lives in its own file and registers itself with register; those that
// only a helper links are executed there (launcher.ExecHelper): audit,
// compose and kube in agentbox-ext, the containerd engine in
// agentbox-containerd (containerd.go).
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/agentbox/agentbox/launcher"
)

// The exit codes of DESIGN.md §5, as launcher defines them.
const (
	exitOK       = launcher.ExitOK
	exitFindings = launcher.ExitFindings
	exitUsage    = launcher.ExitUsage
	exitRefused  = launcher.ExitRefused
	exitHost     = launcher.ExitHost
)

// stdio is what a subcommand may touch of the process: its streams and its
// environment. Tests substitute their own.
type stdio struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
}

// command is one subcommand. run receives the arguments after the
// subcommand's name and returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, s stdio, args []string) int
}

var commands = map[string]command{}

// register adds a subcommand; each subcommand file calls it from init.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("agentbox: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// main gives subcommands a context that no signal cancels: a subcommand
// that must survive a signal (run forwards them to the agent, then tears
// down) installs its own handling; the others keep Go's default of exiting.
func main() {
	os.Exit(dispatch(context.Background(), stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}, os.Args[1:]))
}

// dispatch picks the subcommand named by args[0] and runs it.
func dispatch(ctx context.Context, s stdio, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(s.Out)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == launcher.StarterCommand { // hidden: the macOS engine's first process, as the account
		return launcher.StarterMain(args[1:], s.In, s.Out, s.Err)
	}
	c, ok := commands[args[0]]
	if _, elsewhere := launcher.HelperCommands[args[0]]; !ok && elsewhere {
		return launcher.ExecHelper(args, s.In, s.Out, s.Err)
	}
	if !ok {
		fmt.Fprintf(s.Err, "agentbox: unknown command %q; run 'agentbox help' for the list\n", args[0])
		return exitUsage
	}
	return c.run(ctx, s, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentbox COMMAND [flags] [-- CMD [ARG...]]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	summaries := maps.Clone(launcher.HelperCommands) // listed here, run by agentbox-ext
	for n, c := range commands {
		summaries[n] = c.summary
	}
	for _, n := range slices.Sorted(maps.Keys(summaries)) {
		if summaries[n] != "" { // internal commands have none
			fmt.Fprintf(w, "  %-10s %s\n", n, summaries[n])
		}
	}
}

// fail prints err for the user as "agentbox CMD: err" and returns its exit
// code (launcher.ExitCode, the one mapper of every subcommand).
func fail(s stdio, cmd string, err error) int {
	fmt.Fprintf(s.Err, "agentbox %s: %v\n", cmd, err)
	return launcher.ExitCode(err)
}

// usagef is a usage error (exit 2) with a formatted message.
func usagef(format string, a ...any) error {
	return launcher.WithKind(launcher.KindUsage, fmt.Errorf(format, a...))
}

// hostErr marks err as the host's (exit 4), whatever it wraps.
func hostErr(err error) error { return launcher.WithKind(launcher.KindHost, err) }
