package main

import (
	"context"

	"github.com/agentbox/agentbox/launcher"
)

func init() { register(command{name: "kube", summary: launcher.KubeSummary, run: runKube}) }

func runKube(ctx context.Context, s stdio, args []string) int {
	fs, c, pf := newFlags(s, "kube", launcher.KubeSynopsis), launcher.KubeConfig{Getenv: s.Getenv, Args: args}, policyFlags{}
	c.Flags(fs.StringVar, fs.BoolVar)
	pf.register(fs)
	pos, cmd, code, ok := parseFlags(fs, args)
	if c.Extra, c.Command, c.PolicyInputs = pos, cmd, pf.Inputs; !ok {
		return code
	}
	if err := launcher.KubeMain(ctx, c, s.Out, s.Err); err != nil {
		return fail(s, "kube", err)
	}
	return exitOK
}
