package main

import (
	"context"
	"encoding/json"
	"fmt"
)

func init() {
	register(command{name: "spec", summary: "print the OCI config.json that run would use; runs nothing", run: runSpec})
}

func runSpec(_ context.Context, s stdio, args []string) int {
	l := &launch{io: s}
	fs := newFlags(s, "spec", "[flags] [-- CMD [ARG...]]")
	l.flags.register(fs)
	_, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(cmd) == 0 {
		cmd = []string{"sh"}
	}
	l.argv = cmd
	err := runSteps(context.Background(), []namedStep{
		{"policy", l.loadPolicy},
		{"host", l.captureHost},
		{"ids", func() error { return l.allocateIDs(true) }},
		{"gateway", func() error { l.host.GatewaySocket = l.specGatewaySocket(); return nil }},
		{"plan", l.resolvePlan},
		{"agent", l.prepareAgent},
		{"render", l.render},
	})
	if err != nil {
		return l.failAs("spec", err)
	}
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "\t")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l.spec); err != nil {
		fmt.Fprintln(s.Err, "agentbox spec:", err)
		return exitHost
	}
	return exitOK
}
