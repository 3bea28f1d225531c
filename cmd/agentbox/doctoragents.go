package main

import (
	"context"
	"fmt"

	"github.com/agentbox/agentbox/launcher"
)

// runDoctorAgents is `agentbox doctor --agents`: the escape-prompt
// self-test through every agent CLI found on PATH.
func runDoctorAgents(ctx context.Context, s stdio) int {
	found := launcher.FindAgents()
	if len(found) == 0 {
		fmt.Fprintln(s.Out, "agentbox doctor --agents: no agent CLI on PATH (codex, claude, …)")
		return exitFindings
	}
	worst := 0
	for _, agent := range found {
		fmt.Fprintf(s.Out, "== %s\n", agent)
		var f launchFlags
		cfg, err := f.config(s)
		if err == nil {
			var res launcher.AgentTestResult
			res, err = launcher.AgentSelfTest(ctx, cfg, agent)
			launcher.PrintAttempts(s.Out, res)
			worst = max(worst, res.ExitCode)
		}
		if err != nil {
			worst = max(worst, fail(s, "doctor --agents", err))
		}
	}
	return worst
}
