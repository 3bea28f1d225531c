package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentbox/agentbox/agents"
)

// resolveAgent lets the agent's adapter point it at the run's gateway:
// codex gets a model provider, claude its base URL, any other command the
// proxy variables, each with the per-run token in place of a key. The
// plan's command and environment become the adapter's, and the plan
// records which agent it is and the permission mode its command selects.
// Without a gateway of agentbox's own there is nothing to point at, and the
// command stays as resolved.
func (r *resolver) resolveAgent() error {
	if r.plan.GatewaySocket == "" {
		return nil
	}
	env := map[string]string{}
	for _, kv := range r.plan.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	launch, err := agents.Prepare(r.plan.Command, env, agents.Gateway{URL: r.gatewayURL(), Token: r.run.GatewayToken})
	if err != nil {
		return fmt.Errorf("agent adapter: %w", err)
	}
	for k, v := range launch.Env {
		env[k] = v
	}
	r.plan.Command, r.plan.Env = launch.Argv, envList(r.plan.Env, env)
	r.plan.Agent = Agent{Name: launch.Agent, Permission: launch.Permission, TokenVars: launch.TokenVars()}
	return nil
}

// envList keeps the order of orig for the variables it had and appends the
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
