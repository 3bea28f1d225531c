package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
)

func init() {
	register(command{name: "doctor", summary: "check whether this host can provide the boundary, with the fix for each failure", run: runDoctor})
}

func runDoctor(ctx context.Context, s stdio, args []string) int {
	fs := newFlags(s, "doctor", "[--json] [--agents]")
	asJSON := fs.Bool("json", false, "print one JSON document: checks, layers, residuals and verdict")
	withAgents := fs.Bool("agents", false, "run the escape-prompt self-test through every agent CLI on PATH instead (docs/escape-selftest.md)")
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	opts, err := launcher.DoctorOptions(s.Getenv)
	if err != nil { // the policy names an engine that agentbox-containerd links
		return launcher.ExecHelper(append([]string{"doctor"}, args...), s.In, s.Out, s.Err)
	}
	if *withAgents && len(pos)+len(cmd) == 0 {
		return runDoctorAgents(ctx, s)
	}
	if len(pos)+len(cmd) > 0 {
		fs.Usage()
		return exitUsage
	}
	start := time.Now().UTC()
	rep := doctor.Run(ctx, opts)
	rec := rep.Record(ledger.NewRunID(), start, time.Now().UTC(), append([]string{"agentbox", "doctor"}, args...))
	if *asJSON {
		if err := doctor.WriteJSON(s.Out, rep); err != nil {
			fmt.Fprintln(s.Err, "agentbox doctor:", err)
		}
	} else if err := doctor.WriteText(s.Out, rep, isTerminal(s.Out)); err != nil {
		fmt.Fprintln(s.Err, "agentbox doctor:", err)
	}
	recordDoctor(s, rec, *asJSON)
	return rep.ExitCode()
}

// recordDoctor appends the host report to the ledger. A ledger that cannot
// be written is reported, but does not change doctor's verdict.
func recordDoctor(s stdio, rec ledger.Record, quiet bool) {
	if err := launcher.AppendRecord(s.Getenv, rec); err != nil {
		fmt.Fprintf(s.Err, "agentbox doctor: the host report was not recorded in the ledger: %v\n", err)
		return
	}
	if !quiet {
		fmt.Fprintf(s.Out, "recorded as %s (agentbox show %s)\n", rec.RunID, rec.RunID)
	}
}

// isTerminal reports whether w is a terminal, for colour.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
