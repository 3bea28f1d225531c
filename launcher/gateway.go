package launcher

import (
	"fmt"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// gatewayRefuseTarget is the host internet-unreachable asks the gateway to
// CONNECT to: a reserved name no allowlist can hold, refused unresolved.
const gatewayRefuseTarget = "agentbox-probe.invalid:443"

// gatewayConfig translates the policy's network and gateway sections, with
// the run's id and the token the plan gave the agent.
func gatewayConfig(p policy.Policy, run policy.Run) (netpolicy.Config, error) {
	cfg := netpolicy.Config{RunID: run.ID, Token: run.GatewayToken, Allow: p.Network.Allow, Upstreams: map[string]netpolicy.Upstream{}}
	for name, u := range p.Gateway.Upstreams {
		cfg.Upstreams[name] = netpolicy.Upstream{URL: u.URL, KeyEnv: u.KeyEnv, KeyFile: u.KeyFile, Auth: u.Auth, Models: u.Models, CAFile: u.CAFile}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &policy.InputError{Field: "gateway", Msg: err.Error(), Fix: "see the gateway section of the README"}
	}
	return cfg, nil
}

// stopGateway revokes the token and closes the socket, and returns the
// allow and deny counts for the ledger, and the warning to print, if any
// (teardown prints it once the agent's output is written out).
func stopGateway(gw *netpolicy.RunGateway) (ledger.Gateway, string) {
	if gw == nil {
		return ledger.Gateway{}, ""
	}
	s, err := gw.Stop()
	warning := ""
	if err != nil {
		warning = fmt.Sprintf("agentbox: warning: stopping the gateway: %v\n", err)
	}
	return ledger.Gateway{Allowed: int(s.Allowed), Denied: int(s.Denied), LogDropped: int(s.LogDropped)}, warning
}
