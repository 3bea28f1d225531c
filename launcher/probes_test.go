package launcher

import (
	"slices"
	"testing"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// The residual of a sandbox whose init shares the agent's uid names only
// probes and host checks that exist.
func TestInitSharedProbesExist(t *testing.T) {
	var hostChecks []string
	for _, r := range selftest.VerifyHost("/nonexistent", selftest.SandboxPIDs{}, selftest.HostState{}) {
		hostChecks = append(hostChecks, r.Probe)
	}
	for _, name := range policy.InitSharedProbes {
		if _, ok := selftest.Lookup(name); !ok && !slices.Contains(hostChecks, name) {
			t.Errorf("policy.InitSharedProbes names %q, which is neither a probe nor a host check", name)
		}
	}
}

// A probe's ALLOW refuses the launch unless a residual of the plan names
// that probe; an UNKNOWN of a named probe still refuses it, and so does any
// probe the residual does not name.
func TestFailedProbesHonourNamedResiduals(t *testing.T) {
	res := func(probe string, d selftest.Decision) selftest.Result {
		return selftest.Result{Probe: probe, Expect: selftest.Deny, Decision: d}
	}
	l := &launch{plan: &policy.Plan{Residuals: []policy.Residual{{Code: policy.ResidualInitSharesUID, Probes: []string{"prlimit-pid1-denied", "host-init-uid-separate"}}}}}
	l.st.results = []selftest.Result{
		res("prlimit-pid1-denied", selftest.Allow), res("kill-pid1-denied", selftest.Allow), res("capabilities-zero", selftest.Deny),
	}
	l.st.host = []selftest.Result{res("host-init-uid-separate", selftest.Unknown)}
	var got []string
	for _, r := range l.failedProbes() {
		got = append(got, r.Probe)
	}
	if want := []string{"kill-pid1-denied", "host-init-uid-separate"}; !slices.Equal(got, want) {
		t.Errorf("failed probes %v, want %v", got, want)
	}
}
