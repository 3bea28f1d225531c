package main

import (
	"context"

	"github.com/agentbox/agentbox/launcher"
)

// runDoctorAgents is `agentbox doctor --agents`: the escape-prompt
// self-test through every agent CLI found on PATH.
func runDoctorAgents(ctx context.Context, s stdio) int {
	var f launchFlags
	cfg, err := f.config(s)
	if err != nil {
		return fail(s, "doctor --agents", err)
	}
	return launcher.AgentSelfTestAll(ctx, cfg)
}
