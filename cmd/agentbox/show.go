package main

import (
	"context"
	"errors"

	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
)

func init() {
	register(command{name: "show", summary: "print one record of the evidence ledger in full", run: runShow})
}

func runShow(_ context.Context, s stdio, args []string) int {
	fs := newFlags(s, "show", "RUN_ID [--json]")
	asJSON := fs.Bool("json", false, "print the record as JSON")
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || len(cmd) > 0 {
		fs.Usage()
		return exitUsage
	}
	l, code := openLedger(s, "show")
	if l == nil {
		return code
	}
	r, warns, err := l.Get(pos[0])
	printLedgerWarnings(s, warns)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return fail(s, "show", usagef("no run %q in %s; list the recorded runs with 'agentbox runs'", pos[0], l.Path))
	case err != nil:
		return fail(s, "show", launcher.WithKind(launcher.KindUsage, err))
	case *asJSON:
		return writeJSON(s, "show", r)
	}
	if err := ledger.WriteRecord(s.Out, r); err != nil {
		return fail(s, "show", launcher.WithKind(launcher.KindUsage, err))
	}
	return exitOK
}
