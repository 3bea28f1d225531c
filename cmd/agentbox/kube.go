//go:build agentbox_ext

package main

import (
	"context"

	"github.com/agentbox/agentbox/launcher/deploy"
)

func init() { register(command{name: "kube", summary: deploy.KubeSummary, run: runKube}) }

func runKube(ctx context.Context, s stdio, args []string) int {
	fs, c, pf := newFlags(s, "kube", deploy.KubeSynopsis), deploy.KubeConfig{Getenv: s.Getenv, Args: args}, policyFlags{}
	c.Flags(fs.StringVar, fs.BoolVar)
	pf.register(fs)
	pos, cmd, code, ok := parseFlags(fs, args)
	if c.Extra, c.Command, c.PolicyInputs = pos, cmd, pf.Inputs; !ok {
		return code
	}
	if err := deploy.KubeMain(ctx, c, s.Out, s.Err); err != nil {
		return fail(s, "kube", err)
	}
	return exitOK
}
