package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// newFlags returns a flag set for one subcommand that reports errors to s.Err
// instead of exiting, so that every usage error maps to exitUsage.
func newFlags(s stdio, name, synopsis string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(s.Err)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(s.Err, "usage: agentbox %s %s\n\nflags:\n%s", name, synopsis, fs.FlagUsages())
	}
	return fs
}

// parseFlags parses args and splits off the command after "--". It returns
// ok=false with the exit code to use when parsing failed or help was asked for.
func parseFlags(fs *pflag.FlagSet, args []string) (positional, command []string, code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, nil, exitOK, false
		}
		// ContinueOnError leaves the message to us: one line that names the
		// flag and where to read about the others.
		fmt.Fprintf(fs.Output(), "agentbox %s: %v; see 'agentbox %s --help'\n", fs.Name(), err, fs.Name())
		return nil, nil, exitUsage, false
	}
	rest := fs.Args()
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		return rest[:dash], rest[dash:], exitOK, true
	}
	return rest, nil, exitOK, true
}
