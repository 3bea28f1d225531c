package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
)

func init() {
	register(command{name: "show", summary: "print one record of the evidence ledger in full", run: runShow})
}

func runShow(_ context.Context, io stdio, args []string) int {
	fs := newFlags(io, "show", "RUN_ID [--json]")
	asJSON := fs.Bool("json", false, "print the record as JSON")
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || len(cmd) > 0 {
		fs.Usage()
		return exitUsage
	}
	l, code := openLedger(io, "show")
	if l == nil {
		return code
	}
	r, warns, err := l.Get(pos[0])
	printLedgerWarnings(io, warns)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		fmt.Fprintf(io.Err, "agentbox show: no run %q in %s; list the recorded runs with 'agentbox runs'\n", pos[0], l.Path)
		return exitUsage
	case err != nil:
		return fail(io, "show", launcher.WithKind(launcher.KindUsage, err))
	case *asJSON:
		return writeJSON(io, "show", r)
	}
	if err := ledger.WriteRecord(io.Out, r); err != nil {
		return fail(io, "show", launcher.WithKind(launcher.KindUsage, err))
	}
	return exitOK
}
