package main

import (
	"context"
	"encoding/json"

	"github.com/agentbox/agentbox/launcher"
)

func init() {
	register(command{name: "spec", summary: "print the OCI config.json that run would use; runs nothing", run: runSpec})
}

func runSpec(ctx context.Context, s stdio, args []string) int {
	var f launchFlags
	fs := newFlags(s, "spec", "[flags] [-- CMD [ARG...]]")
	f.policy.register(fs)
	_, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	cfg, err := f.config(s)
	if err == nil && launcher.EngineElsewhere(cfg) != nil {
		return launcher.ExecHelper(append([]string{"spec"}, args...), s.In, s.Out, s.Err)
	}
	if err != nil {
		return fail(s, "spec", err)
	}
	cfg.Argv = cmd
	sp, err := launcher.Spec(ctx, cfg)
	if err != nil {
		return fail(s, "spec", err)
	}
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "\t")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sp); err != nil {
		return fail(s, "spec", hostErr(err))
	}
	return exitOK
}
