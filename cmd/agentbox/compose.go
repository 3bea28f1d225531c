//go:build agentbox_ext

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/compose/check"
	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/launcher/deploy"
)

func init() {
	register(command{name: "compose", summary: "write a hardened compose project (agent + gateway + internal network), or --check one", run: runCompose})
}

// composeFlags are the flags of `agentbox compose`.
type composeFlags struct {
	policy            policyFlags
	agent, image, out string
	build, force      bool
	check             []string
}

func runCompose(ctx context.Context, s stdio, args []string) int {
	fs := newFlags(s, "compose", "[--agent codex|claude] --image IMAGE [--out DIR] [--build] [flags] [-- CMD [ARG...]]\n       agentbox compose --check FILE [--check OVERRIDE...]")
	var f composeFlags
	fs.StringVar(&f.agent, "agent", "", "agent adapter: "+fmt.Sprint(compose.AgentNames())+" (its command, unless one follows --)")
	fs.StringVar(&f.image, "image", "", "the agent's image (required)")
	fs.StringVar(&f.out, "out", "", "output directory (default: ./agentbox-compose)")
	fs.BoolVar(&f.build, "build", false, "also build the gateway image (docker build, from local files only)")
	fs.BoolVar(&f.force, "force", false, "replace files in --out that differ from the rendering")
	fs.StringArrayVar(&f.check, "check", nil, "audit this compose file instead and print the fix for each finding (repeatable: merged in order)")
	f.policy.register(fs)
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return fail(s, "compose", usagef("unexpected argument %q; a command goes after --", pos[0]))
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail(s, "compose", err)
	}
	cfg := deploy.ComposeConfig{Cwd: cwd, Getenv: s.Getenv, Environ: os.Environ(), Args: args, Agent: f.agent, Image: f.image, Command: cmd, OutDir: f.out, Force: f.force, Check: f.check}
	if cfg.Policy, cfg.Sources, err = f.policy.Inputs(cwd, s.Getenv); err != nil {
		return fail(s, "compose", err)
	}
	if len(f.check) > 0 {
		return composeCheck(ctx, s, cfg)
	}
	return composeWrite(ctx, s, cfg, f.build)
}

// composeCheck audits existing compose files and prints each fix.
func composeCheck(ctx context.Context, s stdio, cfg deploy.ComposeConfig) int {
	res, err := deploy.ComposeCheck(ctx, cfg)
	if err != nil {
		return fail(s, "compose", err)
	}
	warnLedger(s, res.LedgerErr)
	n, err := check.WriteFindings(s.Out, res.Report)
	if err == nil {
		err = check.WriteResiduals(s.Out, res.Report)
	}
	if err != nil {
		return fail(s, "compose", err)
	}
	fmt.Fprintf(s.Out, "%d finding(s).\n", n)
	if n > 0 {
		return exitFindings
	}
	return exitOK
}

// composeWrite renders the project, audits it and writes it.
func composeWrite(ctx context.Context, s stdio, cfg deploy.ComposeConfig, build bool) int {
	res, err := deploy.Compose(ctx, cfg)
	warnLedger(s, res.LedgerErr)
	if launcher.KindOf(err) == launcher.KindRefused && res.Output != nil {
		fmt.Fprintf(s.Err, "agentbox compose: the rendered project fails its own audit; nothing was written:\n")
		if _, err := check.WriteFindings(s.Err, res.Report); err != nil {
			return fail(s, "compose", err)
		}
		return exitRefused
	}
	if err != nil {
		return fail(s, "compose", err)
	}
	if err := check.WriteSummary(s.Out, res.OutDir, res.Output, res.Report, res.Written); err != nil {
		return fail(s, "compose", err)
	}
	if build {
		if err := deploy.BuildGateway(ctx, res, s.Err); err != nil {
			return fail(s, "compose", err)
		}
		fmt.Fprintf(s.Out, "built %s\n", res.Output.GatewayImage)
	}
	return exitOK
}

func warnLedger(s stdio, err error) {
	if err != nil {
		fmt.Fprintf(s.Err, "agentbox compose: warning: ledger: %v\n", err)
	}
}
