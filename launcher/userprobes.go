package launcher

import (
	"slices"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// planProbes are the probes the plan's self-test runs: every probe of
// catalog but those its residuals take out (policy.Plan.Unprobed: on
// darwin, the probes of what xnu does not have, each residual naming the
// layer that stands in); nil, which runs the whole catalog, when the plan
// takes none out.
func planProbes(plan *policy.Plan, catalog []selftest.Probe) []string {
	out := plan.Unprobed()
	if len(out) == 0 {
		return nil
	}
	var run []string
	for _, p := range catalog {
		if !slices.Contains(out, p.Name) {
			run = append(run, p.Name)
		}
	}
	return run
}
