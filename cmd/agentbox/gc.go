package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
)

func init() {
	register(command{name: "gc", summary: "find and clean what crashed runs left behind", run: runGC})
}

func runGC(ctx context.Context, s stdio, args []string) int {
	fs := newFlags(s, "gc", "[--json]")
	asJSON := fs.Bool("json", false, "print one JSON object per cleaned run")
	if _, _, code, ok := parseFlags(fs, args); !ok {
		return code
	}
	d, err := launcher.FindDirs(s.Getenv)
	if err != nil {
		return fail(s, "gc", hostErr(err))
	}
	recs, err := launcher.CollectGarbage(ctx, d, nil)
	if errors.Is(err, launcher.ErrEngineElsewhere) {
		return launcher.ExecHelper(append([]string{"gc"}, args...), s.In, s.Out, s.Err)
	}
	for _, r := range recs {
		printGC(s, r, *asJSON)
	}
	note, cerr := launcher.ClearHiddenCgroups(d)
	if note != "" && !*asJSON {
		fmt.Fprintln(s.Out, note)
	}
	if err = errors.Join(err, cerr); err != nil {
		return fail(s, "gc", hostErr(err))
	}
	if !*asJSON {
		fmt.Fprintln(s.Out, gcSummary(recs))
	}
	for _, r := range recs {
		if !r.Teardown.Clean() {
			return exitFindings
		}
	}
	return exitOK
}

// gcSummary counts the runs cleaned and those left for a later gc.
func gcSummary(recs []ledger.Record) string {
	left := 0
	for _, r := range recs {
		if !r.Teardown.Clean() {
			left++
		}
	}
	if left == 0 {
		return fmt.Sprintf("%d stale run(s) cleaned.", len(recs))
	}
	return fmt.Sprintf("%d stale run(s) cleaned, %d left for a later 'agentbox gc' (see above).", len(recs)-left, left)
}

func printGC(s stdio, r ledger.Record, asJSON bool) {
	if asJSON {
		_ = json.NewEncoder(s.Out).Encode(r)
		return
	}
	fmt.Fprintf(s.Out, "run %s: %s\n", r.RunID, r.Notes)
}
