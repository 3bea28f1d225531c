package launcher

import (
	"context"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Spec is Run's Prepare recipe, dry, up to the rendered spec, for
// `agentbox spec`: nothing is created, leased or started. The id slot shown
// is the one a run would get now, and the gateway socket and cgroup are
// where a run's would be.
func Spec(ctx context.Context, cfg Config) (*specs.Spec, error) {
	if len(cfg.Argv) == 0 {
		cfg.Argv = []string{"sh"}
	}
	cfg.ProbesOnly, cfg.Evidence = false, ""
	l := &launch{cfg: cfg, out: cfg.stderr()}
	if err := l.runSteps(ctx, l.recipe(ctx, true)); err != nil {
		return nil, err
	}
	return l.spec, nil
}
