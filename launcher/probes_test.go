package launcher

import (
	"slices"
	"testing"

	"github.com/agentbox/agentbox/netpolicy"
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

// The verdict's excuses are the plan's residuals' probes and the
// UNKNOWNs the user accepts: what selftest.Judge excuses, and nothing else.
func TestExcusesAreThePlansAndTheUsers(t *testing.T) {
	l := &launch{cfg: Config{AllowUnknown: map[string]string{"dns-unresolvable": "no resolver"}}}
	p := &prepared{planned: &planned{l: l, plan: &policy.Plan{Residuals: []policy.Residual{
		{Code: policy.ResidualRootlessSingle, Probes: []string{"prlimit-pid1-denied", "host-init-uid-separate"}},
		{Code: "lsm-unavailable"},
	}}}}
	ex := p.excuses()
	if want := []string{"prlimit-pid1-denied", "host-init-uid-separate"}; !slices.Equal(ex.Residual, want) || len(ex.AllowUnknown) != 1 {
		t.Errorf("excuses %+v, want the residual's probes %v and the one accepted UNKNOWN", ex, want)
	}
}

// The plan's gateway layout is the gateway's: the port init relays, and
// the socket's place in the run directory (startGateway also refuses a
// gateway that listens elsewhere).
func TestPlanGatewayIsTheGateways(t *testing.T) {
	if policy.GatewayPort != netpolicy.DefaultPort || policy.GatewaySocketDir != netpolicy.RunSocketDir || policy.GatewaySocketName != netpolicy.RunSocketName {
		t.Errorf("policy plans the gateway at port %d, %s/%s; netpolicy serves it at %d, %s/%s",
			policy.GatewayPort, policy.GatewaySocketDir, policy.GatewaySocketName, netpolicy.DefaultPort, netpolicy.RunSocketDir, netpolicy.RunSocketName)
	}
}
