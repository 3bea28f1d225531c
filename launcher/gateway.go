package launcher

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// gatewayURL is where agents reach the gateway inside the sandbox: the
// bridge agentbox-init runs on the sandbox's loopback.
var gatewayURL = "http://127.0.0.1:" + strconv.Itoa(netpolicy.DefaultPort)

// gatewayRefuseTarget is the host internet-unreachable asks the gateway to
// CONNECT to: a reserved name no allowlist can hold, refused unresolved.
const gatewayRefuseTarget = "agentbox-probe.invalid:443"

// startGateway starts the run's gateway before planning, because its socket
// is a bind source. The real keys stay in this process; the sandbox gets a
// per-run token, revoked when the gateway stops.
func (l *launch) startGateway() error {
	cfg, err := gatewayConfig(l.policy, l.runID)
	if err != nil {
		return err
	}
	gw, err := netpolicy.StartRun(l.runDir.Path, cfg)
	if err != nil {
		return fmt.Errorf("start the gateway: %w", err)
	}
	l.gw = gw
	l.host.GatewaySocket = gw.Socket
	return nil
}

// gatewayConfig translates the policy's network and gateway sections.
func gatewayConfig(p policy.Policy, runID string) (netpolicy.Config, error) {
	cfg := netpolicy.Config{RunID: runID, Allow: p.Network.Allow, Upstreams: map[string]netpolicy.Upstream{}}
	for name, u := range p.Gateway.Upstreams {
		cfg.Upstreams[name] = netpolicy.Upstream{URL: u.URL, KeyEnv: u.KeyEnv, KeyFile: u.KeyFile, Auth: u.Auth, Models: u.Models, CAFile: u.CAFile}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &policy.InputError{Field: "gateway", Msg: err.Error(), Fix: "see the gateway section of the README"}
	}
	return cfg, nil
}

// prepareAgent lets the agent's adapter point it at the gateway: codex gets
// a model provider, claude its base URL, any other command the proxy
// variables, each with the per-run token in place of a key. The plan's
// command and environment become the adapter's.
func (l *launch) prepareAgent() error {
	token := "PER-RUN-TOKEN" // agentbox spec: what a run puts there
	if l.gw != nil {
		token = l.gw.Token
	}
	env := map[string]string{}
	for _, kv := range l.plan.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	launch, err := agents.Prepare(l.plan.Command, env, agents.Gateway{URL: gatewayURL, Token: token})
	if err != nil {
		return err
	}
	for k, v := range launch.Env {
		env[k] = v
	}
	l.plan.Command, l.plan.Env, l.agent = launch.Argv, envList(l.plan.Env, env), launch
	return nil
}

// envList keeps the plan's order for the variables it had and appends the
// adapter's new ones sorted.
func envList(orig []string, env map[string]string) []string {
	out := make([]string, 0, len(env))
	seen := map[string]bool{}
	for _, kv := range orig {
		k, _, _ := strings.Cut(kv, "=")
		out, seen[k] = append(out, k+"="+env[k]), true
	}
	var added []string
	for k := range env {
		if !seen[k] {
			added = append(added, k)
		}
	}
	sort.Strings(added)
	for _, k := range added {
		out = append(out, k+"="+env[k])
	}
	return out
}

// stopGateway revokes the token and closes the socket, and returns the
// allow and deny counts for the ledger.
func (l *launch) stopGateway() ledger.Gateway {
	if l.gw == nil {
		return ledger.Gateway{}
	}
	s, err := l.gw.Stop()
	if err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: stopping the gateway: %v\n", err)
	}
	l.gw = nil
	return ledger.Gateway{Allowed: int(s.Allowed), Denied: int(s.Denied), LogDropped: int(s.LogDropped)}
}

// specGatewaySocket is where `agentbox spec` shows the gateway socket: a
// run's run directory, not yet made.
func (l *launch) specGatewaySocket() string {
	return filepath.Join(l.dirs.RunRoot, "runs", "RUN_ID", "gateway", "gateway.sock")
}
