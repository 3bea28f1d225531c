package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
)

func init() {
	register(command{name: "runs", summary: "list the records of the evidence ledger, newest first", run: runRuns})
}

func runRuns(_ context.Context, io stdio, args []string) int {
	fs := newFlags(io, "runs", "[--json] [--limit N]")
	asJSON := fs.Bool("json", false, "print the records as a JSON array")
	limit := fs.Int("limit", 20, "show the N most recent records; 0 shows all")
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos)+len(cmd) > 0 || *limit < 0 {
		fs.Usage()
		return exitUsage
	}
	l, code := openLedger(io, "runs")
	if l == nil {
		return code
	}
	recs, warns, err := l.List()
	printLedgerWarnings(io, warns)
	if err != nil {
		return fail(io, "runs", launcher.WithKind(launcher.KindUsage, err))
	}
	recs = ledger.Latest(recs, *limit)
	if *asJSON {
		return writeJSON(io, "runs", append([]ledger.Record{}, recs...))
	}
	if len(recs) == 0 {
		fmt.Fprintf(io.Err, "agentbox runs: no records yet in %s\n", l.Path)
		return exitOK
	}
	if err := ledger.WriteTable(io.Out, recs); err != nil {
		return fail(io, "runs", launcher.WithKind(launcher.KindUsage, err))
	}
	return exitOK
}

// openLedger opens the ledger of this user's state directory; on failure it
// prints why and returns nil and the exit code.
func openLedger(io stdio, cmd string) (*ledger.Ledger, int) {
	dir, err := ledger.StateDir(io.Getenv, os.Geteuid())
	if err != nil {
		fmt.Fprintf(io.Err, "agentbox %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	return ledger.Open(filepath.Join(dir, ledger.FileName)), exitOK
}

func printLedgerWarnings(io stdio, warns []error) {
	for _, w := range warns {
		fmt.Fprintf(io.Err, "agentbox: warning: %v\n", w)
	}
}

// writeJSON prints v indented, for --json output.
func writeJSON(io stdio, cmd string, v any) int {
	enc := json.NewEncoder(io.Out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(io.Err, "agentbox %s: %v\n", cmd, err)
		return exitUsage
	}
	return exitOK
}
