package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/agentbox/agentbox/launcher"
)

func init() {
	register(command{name: "selftest", summary: "build a throwaway sandbox with the current policy, run every probe, print the verdicts", run: runSelfTest})
}

func runSelfTest(ctx context.Context, s stdio, args []string) int {
	var f launchFlags
	fs := newFlags(s, "selftest", "[flags]")
	f.policy.register(fs)
	f.registerSelfTest(fs)
	f.registerEngine(fs)
	fs.BoolVar(&f.json, "json", false, "print one JSON line per probe, then the verdict, on stdout")
	f.registerEvidence(fs)
	agent := fs.String("agent", "", "run the escape-prompt self-test through this agent (codex, claude, gemini, goose, aider or 'CMD ARG…'; docs/escape-selftest.md)")
	outside := fs.String("outside-target", "", "with --agent: IP:PORT of a test host outside that the outside-host attempt connects to (default: a route lookup, no packet)")
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos)+len(cmd) > 0 {
		fs.Usage()
		return exitUsage
	}
	cfg, err := f.config(s)
	if err == nil && launcher.EngineElsewhere(cfg) != nil {
		return launcher.ExecHelper(append([]string{"selftest"}, args...), s.In, s.Out, s.Err)
	}
	if err != nil {
		return fail(s, "selftest", err)
	}
	if *agent != "" {
		res, err := launcher.AgentSelfTest(ctx, cfg, *agent, launcher.AgentTestOptions{Outside: *outside})
		if err != nil {
			if res.Record.RunID != "" {
				launcher.PrintAttempts(s.Out, res)
			}
			return fail(s, "selftest", err)
		}
		launcher.PrintAttempts(s.Out, res)
		return res.ExitCode
	}
	if *outside != "" {
		return fail(s, "selftest", usagef("--outside-target goes with --agent; the probes take --probe-target internet=IP:PORT"))
	}
	cfg.ProbesOnly = true
	launcher.PaceCollector()
	res, err := launcher.Run(ctx, cfg)
	if err != nil {
		return fail(s, "selftest", err)
	}
	printVerdict(s, res, f.json)
	return res.ExitCode
}

// printVerdict prints the table (or JSON lines) and the verdict.
func printVerdict(s stdio, res launcher.Result, asJSON bool) {
	td := res.Record.Teardown
	verdict := "PASS"
	if len(res.Failed) > 0 || (td != nil && !td.Clean()) {
		verdict = "FAIL"
	}
	all, runID := res.Probes, res.Record.RunID
	if asJSON {
		for _, r := range all {
			fmt.Fprintln(s.Out, launcher.ProbeLine(r))
		}
		_ = json.NewEncoder(s.Out).Encode(map[string]any{"verdict": verdict, "run_id": runID, "probes": len(all), "failed": len(res.Failed), "teardown": td})
		return
	}
	tw := tabwriter.NewWriter(s.Out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tEXPECT\tDECISION\tOBSERVED")
	for _, r := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Probe, r.Expect, r.Decision, r.Observed)
	}
	tw.Flush()
	cleanup := "not run"
	if td != nil {
		cleanup = td.Summary()
	}
	residual := ""
	if n := res.ResidualAllowed; n > 0 {
		residual = fmt.Sprintf(" (%d of them ALLOW under a recorded residual)", n)
	}
	fmt.Fprintf(s.Out, "\n%s: %d of %d probes passed%s; teardown %s; run %s\n", verdict, len(all)-len(res.Failed), len(all), residual, cleanup, runID)
}
