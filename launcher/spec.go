package launcher

import (
	"context"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Spec is Run's Prepare recipe, dry, up to the rendered spec, for
// `agentbox spec`: its pure prefix (policy, host, workspace, inputs, plan,
// evidence), then the ids and the render. Nothing is created, leased or
// started. The id slot shown is the one a run would get now (the
// allocator's Peek), and the run id, gateway token, run directory, gateway
// socket and cgroup are placeholders where a run's would be.
func Spec(ctx context.Context, cfg Config) (*specs.Spec, error) {
	if len(cfg.Argv) == 0 {
		cfg.Argv = []string{"sh"}
	}
	cfg.ProbesOnly, cfg.Evidence = false, ""
	l := &launch{cfg: cfg, out: cfg.stderr()}
	p := &prepared{planned: &planned{l: l, dry: true}}
	if err := p.runRecipe(ctx); err != nil {
		return nil, err
	}
	return p.spec, nil
}
