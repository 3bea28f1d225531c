package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/netpolicy"
)

func init() {
	register(command{name: "gateway", summary: "run the model gateway and allowlisting proxy standalone (compose, Kubernetes)", run: runGateway})
}

// runGateway is `agentbox gateway --config FILE`: the gateway of `agentbox
// run`, on the listener its config names, until SIGINT or SIGTERM.
func runGateway(ctx context.Context, s stdio, args []string) int {
	fs := newFlags(s, "gateway", "--config FILE")
	path := fs.String("config", "", "gateway config file (YAML or JSON; see docs/gateway.md)")
	check := fs.Bool("check", false, "validate the config and the token, print the routes, and exit")
	rest, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if *path == "" || len(rest) > 0 || len(cmd) > 0 {
		fs.Usage()
		return exitUsage
	}
	cfg, err := netpolicy.LoadConfig(*path)
	if err != nil {
		return fail(s, "gateway", launcher.WithKind(launcher.KindUsage, err))
	}
	if cfg.Listen == "" {
		return fail(s, "gateway", usagef("%s: no listen address; set listen: unix:/path or tcp:HOST:PORT", *path))
	}
	if err := cfg.LoadToken(s.Getenv); err != nil {
		return fail(s, "gateway", usagef("%s: %w", *path, err))
	}
	g, err := netpolicy.New(*cfg, netpolicy.WithGetenv(s.Getenv))
	if err != nil {
		return fail(s, "gateway", launcher.WithKind(launcher.KindUsage, err))
	}
	g.WriteRoutes(s.Err, "agentbox gateway: ", cfg.Allow)
	if *check {
		if err := g.Close(); err != nil && !errors.Is(err, context.Canceled) {
			return fail(s, "gateway", hostErr(fmt.Errorf("decision log: %w", err)))
		}
		return exitOK
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := g.ServeUntil(ctx, cfg.Listen, s.Err, "agentbox gateway: "); err != nil {
		return fail(s, "gateway", hostErr(err))
	}
	return exitOK
}
