// Command agentbox builds a verified sandbox around an AI coding agent.
//
// This package only wires the other packages together: it parses flags,
// calls the pipeline stages in order (policy, plan, render, audit, engine,
// teardown, ledger) and maps their errors to the exit codes of DESIGN.md §5.
// Each subcommand lives in its own file and registers itself with register.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
)

// Exit codes shared by every subcommand (DESIGN.md §5). `run` passes the
// agent's own exit code through instead.
const (
	exitOK       = 0 // success
	exitFindings = 1 // findings or failed probes
	exitUsage    = 2 // usage error or bad input
	exitRefused  = 3 // boundary refused before launch
	exitHost     = 4 // host cannot provide the boundary
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
	run     func(ctx context.Context, io stdio, args []string) int
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
func dispatch(ctx context.Context, io stdio, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(io.Out)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(io.Err, "agentbox: unknown command %q; run 'agentbox help' for the list\n", args[0])
		return exitUsage
	}
	return c.run(ctx, io, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentbox COMMAND [flags] [-- CMD [ARG...]]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if commands[n].summary != "" { // internal commands have none
			fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
		}
	}
}
