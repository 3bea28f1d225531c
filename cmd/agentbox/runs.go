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

func runRuns(_ context.Context, s stdio, args []string) int {
	fs := newFlags(s, "runs", "[--json] [--limit N]")
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
	l, code := openLedger(s, "runs")
	if l == nil {
		return code
	}
	recs, warns, err := l.List()
	printLedgerWarnings(s, warns)
	if err != nil {
		return fail(s, "runs", launcher.WithKind(launcher.KindUsage, err))
	}
	recs = ledger.Latest(recs, *limit)
	if *asJSON {
		return writeJSON(s, "runs", append([]ledger.Record{}, recs...))
	}
	if len(recs) == 0 {
		fmt.Fprintf(s.Err, "agentbox runs: no records yet in %s\n", l.Path)
		return exitOK
	}
	if err := ledger.WriteTable(s.Out, recs); err != nil {
		return fail(s, "runs", launcher.WithKind(launcher.KindUsage, err))
	}
	return exitOK
}

// openLedger opens the ledger of this user's state directory; on failure it
// prints why and returns nil and the exit code.
func openLedger(s stdio, cmd string) (*ledger.Ledger, int) {
	dir, err := ledger.StateDir(s.Getenv, os.Geteuid())
	if err != nil {
		return nil, fail(s, cmd, launcher.WithKind(launcher.KindUsage, err))
	}
	return ledger.Open(filepath.Join(dir, ledger.FileName)), exitOK
}

func printLedgerWarnings(s stdio, warns []error) {
	for _, w := range warns {
		fmt.Fprintf(s.Err, "agentbox: warning: %v\n", w)
	}
}

// writeJSON prints v indented, for --json output.
func writeJSON(s stdio, cmd string, v any) int {
	enc := json.NewEncoder(s.Out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(s, cmd, launcher.WithKind(launcher.KindUsage, err))
	}
	return exitOK
}
