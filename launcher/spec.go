package launcher

import (
	"context"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Spec is the Prepare recipe of Run up to the rendered spec, for `agentbox
// spec`: nothing is created, leased or started. The id slot shown is the
// one a run would get now, and the gateway socket and cgroup are where a
// run's would be.
func Spec(ctx context.Context, cfg Config) (*specs.Spec, error) {
	if len(cfg.Argv) == 0 {
		cfg.Argv = []string{"sh"}
	}
	cfg.ProbesOnly, cfg.Evidence = false, ""
	l := &launch{cfg: cfg, out: cfg.stderr()}
	err := l.runSteps(ctx, []namedStep{
		{"policy", l.loadPolicy},
		{"host", l.captureHost},
		{"ids", func() error { return l.allocateIDs(true) }},
		{"gateway", func() error { l.host.GatewaySocket = l.specGatewaySocket(); return nil }},
		{"plan", l.resolvePlan},
		{"agent", l.prepareAgent},
		{"render", l.render},
	})
	if err != nil {
		return nil, err
	}
	return l.spec, nil
}
