package compose

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/agents"
)

// The variables that carry the per-sandbox gateway key into the agent
// service. They are the only credential-named variables the lab's audit
// script allows in an agent container, so that the project audits clean by
// its measure as well as agentbox's.
const (
	// OpenAIKeyEnv is read by codex (as its model provider's env_key) and
	// by OpenAI-style clients; they send it as Authorization: Bearer.
	OpenAIKeyEnv = "OPENAI_API_KEY"
	// AnthropicTokenEnv is read by Claude Code and the Anthropic SDKs as a
	// bearer token (ANTHROPIC_API_KEY would be sent as x-api-key). The
	// gateway accepts the key either way (netpolicy presentedToken).
	AnthropicTokenEnv = "ANTHROPIC_AUTH_TOKEN"
)

// AgentKeyVars are, sorted, the only variables of the agent service that may
// hold the gateway key: KeyEnv, AnthropicTokenEnv and OpenAIKeyEnv.
var AgentKeyVars = []string{KeyEnv, AnthropicTokenEnv, OpenAIKeyEnv}

// renamedKeys are the adapter's key variables (agents.Prepare, shared with
// agentbox run) that compose carries under another name.
var renamedKeys = map[string]string{
	agents.TokenEnv:     "", // AGENT_GATEWAY_KEY carries it; codex's env_key is renamed below
	"ANTHROPIC_API_KEY": AnthropicTokenEnv,
}

// codexKeyOverride is the -c override with which the codex adapter names
// the variable its model provider reads the key from.
func codexKeyOverride(env string) string {
	return "model_providers." + agents.ProviderID + ".env_key=" + strconv.Quote(env)
}

// composeKeys renames the key variables of the adapter's launch to the ones
// the agent service may carry (AgentKeyVars), pointing codex's model
// provider at OpenAIKeyEnv. A launch that would still carry the key under
// any other name is an error: the adapter changed and compose must learn it.
func composeKeys(l *agents.Launch, token string) error {
	env := map[string]string{}
	for k, v := range l.Env {
		to, renamed := renamedKeys[k]
		switch {
		case !renamed:
			env[k] = v
		case to != "":
			env[to] = v
		}
	}
	if l.Agent == "codex" {
		i := slices.Index(l.Argv, codexKeyOverride(agents.TokenEnv))
		if i < 0 {
			return fmt.Errorf("the codex adapter no longer names its key variable with %s; compose cannot point it at %s", codexKeyOverride(agents.TokenEnv), OpenAIKeyEnv)
		}
		l.Argv = slices.Clone(l.Argv)
		l.Argv[i] = codexKeyOverride(OpenAIKeyEnv)
		env[OpenAIKeyEnv] = token
	}
	var stray []string
	for k, v := range env {
		if v == token && !slices.Contains(AgentKeyVars, k) {
			stray = append(stray, k)
		}
	}
	if len(stray) > 0 {
		slices.Sort(stray)
		return fmt.Errorf("the %s adapter puts the gateway key in %s; the agent service carries it only as %s", l.Agent, strings.Join(stray, ", "), strings.Join(AgentKeyVars, ", "))
	}
	l.Env = env
	return nil
}
