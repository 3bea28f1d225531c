package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentbox/agentbox/netpolicy"
)

func init() {
	register(command{name: "gateway", summary: "run the model gateway and allowlisting proxy standalone (compose, Kubernetes)", run: runGateway})
}

// runGateway is `agentbox gateway --config FILE`: the gateway of `agentbox
// run`, on the listener its config names, until SIGINT or SIGTERM.
func runGateway(ctx context.Context, io stdio, args []string) int {
	fs := newFlags(io, "gateway", "--config FILE")
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
		fmt.Fprintf(io.Err, "agentbox gateway: %v\n", err)
		return exitUsage
	}
	if cfg.Listen == "" {
		fmt.Fprintf(io.Err, "agentbox gateway: %s: no listen address; set listen: unix:/path or tcp:HOST:PORT\n", *path)
		return exitUsage
	}
	if err := cfg.LoadToken(io.Getenv); err != nil {
		fmt.Fprintf(io.Err, "agentbox gateway: %s: %v\n", *path, err)
		return exitUsage
	}
	g, err := netpolicy.New(*cfg, netpolicy.WithGetenv(io.Getenv))
	if err != nil {
		fmt.Fprintf(io.Err, "agentbox gateway: %v\n", err)
		return exitUsage
	}
	printRoutes(io, g, cfg)
	if *check {
		return closeGateway(io, g, exitOK)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveGateway(ctx, io, g, cfg.Listen)
}

func serveGateway(ctx context.Context, io stdio, g *netpolicy.Gateway, listen string) int {
	l, err := netpolicy.Listen(listen)
	if err != nil {
		fmt.Fprintf(io.Err, "agentbox gateway: %v\n", err)
		return closeGateway(io, g, exitHost)
	}
	fmt.Fprintf(io.Err, "agentbox gateway: listening on %s\n", listen)
	served := make(chan error, 1)
	go func() { served <- g.Serve(l) }()
	code := exitOK
	select {
	case <-ctx.Done():
	case err := <-served:
		if err != nil {
			fmt.Fprintf(io.Err, "agentbox gateway: %v\n", err)
			code = exitHost
		}
	}
	code = closeGateway(io, g, code)
	s := g.Stats()
	fmt.Fprintf(io.Err, "agentbox gateway: stopped: %d allowed, %d denied\n", s.Allowed, s.Denied)
	return code
}

func closeGateway(io stdio, g *netpolicy.Gateway, code int) int {
	if err := g.Close(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(io.Err, "agentbox gateway: decision log: %v\n", err)
		return max(code, exitHost)
	}
	return code
}

// printRoutes tells the operator what the gateway will do, without secrets.
func printRoutes(io stdio, g *netpolicy.Gateway, cfg *netpolicy.Config) {
	for _, r := range g.Routes() {
		key := "no key"
		switch {
		case r.HasKey:
			key = "key from " + r.KeySource
		case r.KeySource != "":
			key = "no key (" + strings.TrimPrefix(r.KeySource, "env:") + " is unset)"
		}
		fmt.Fprintf(io.Err, "agentbox gateway: route /%s/ -> %s (%s)\n", r.Name, r.URL, key)
	}
	if len(cfg.Allow) == 0 {
		fmt.Fprintln(io.Err, "agentbox gateway: proxy: network.allow is empty, every destination is refused")
	} else {
		fmt.Fprintf(io.Err, "agentbox gateway: proxy: allows %s\n", strings.Join(cfg.Allow, ", "))
	}
}
