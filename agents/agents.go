// Package agents knows how each AI coding agent reaches the gateway and how
// it spells auto-approval.
//
// Inside the sandbox the only way out is the gateway at
// http://127.0.0.1:PORT (see netpolicy). An adapter turns the user's command
// into a Launch: the argv with the agent's own config overrides added, the
// environment variables that point the agent at the gateway with the per-run
// token (never a real key), and the permission mode the command selects, for
// the run record and the audit.
//
//   - codex gets -c overrides defining a model provider "agentbox" at
//     GATEWAY/openai/v1 (responses wire API) whose key is read from
//     AGENTBOX_GATEWAY_TOKEN, with the update check, analytics, feedback
//     and OpenTelemetry export off. The token is passed in the environment,
//     not in argv, so that it does not land in the recorded command line.
//   - claude gets ANTHROPIC_BASE_URL=GATEWAY/anthropic and the token as
//     ANTHROPIC_AUTH_TOKEN, with non-essential traffic, telemetry, error
//     reporting and the autoupdater off.
//   - every agent gets HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (both cases)
//     set to the gateway, whose proxy reaches network.allow hosts only, and
//     NO_PROXY=127.0.0.1,::1,localhost so that gateway routes are not sent
//     through the proxy; any other command also gets OPENAI_BASE_URL,
//     OPENAI_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY pointing at
//     the gateway with the token, which most OpenAI- and Anthropic-compatible
//     tools read.
//
// The adapter is chosen by the base name of argv[0].
package agents

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// TokenEnv is the variable that carries the per-run gateway token.
const TokenEnv = "AGENTBOX_GATEWAY_TOKEN"

// URLEnv is the variable that carries the gateway's base URL.
const URLEnv = "AGENTBOX_GATEWAY_URL"

// Gateway is where the agent reaches the gateway from inside the sandbox.
type Gateway struct {
	// URL is the base URL, "http://127.0.0.1:PORT", without a path.
	URL string
	// Token is the per-run token the gateway accepts in place of a key.
	Token string
}

func (g Gateway) validate() error {
	u, err := url.Parse(g.URL)
	if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("gateway URL %q: want http://HOST:PORT", g.URL)
	}
	if g.Token == "" {
		return errors.New("gateway token is empty")
	}
	return nil
}

func (g Gateway) base() string { return strings.TrimSuffix(g.URL, "/") }

// Permission is the permission mode an agent's command selects.
type Permission struct {
	// Mode is the agent's own name for it ("bypassPermissions",
	// "approval=never sandbox=read-only", "yolo", "default", ...), or
	// "unknown" when the command line does not decide it.
	Mode string `json:"mode"`
	// AutoApprove says the agent runs tools (shell commands, edits) without
	// a person approving each one.
	AutoApprove bool `json:"auto_approve"`
	// Source is the flag or variable that chose the mode, or "default".
	Source string `json:"source"`
	// Note says what the mode leaves open, when that matters.
	Note string `json:"note,omitempty"`
}

// Launch is a command ready to run in the sandbox.
type Launch struct {
	// Agent is the adapter's name: codex, claude, gemini, goose, aider,
	// opencode or generic.
	Agent string `json:"agent"`
	// Argv is the command with the adapter's arguments added.
	Argv []string `json:"argv"`
	// Env holds the variables to add to (and override in) the agent's
	// environment. It holds the token; do not log it.
	Env map[string]string `json:"-"`
	// Permission is the mode the command selects.
	Permission Permission `json:"permission"`
}

// Adapter prepares one agent's command.
type Adapter interface {
	// Name is the adapter's name, the agent's command name.
	Name() string
	// Prepare returns the Launch for argv. env is the environment the agent
	// will get otherwise (some agents read their mode from it).
	Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error)
	// Permission is the permission mode the agent's arguments (argv
	// without argv[0]) and environment select.
	Permission(args []string, env map[string]string) Permission
}

var adapters = map[string]Adapter{}

func register(a Adapter) { adapters[a.Name()] = a }

// Names returns the names of the agents with an adapter, sorted.
func Names() []string { return slices.Sorted(maps.Keys(adapters)) }

// Detect returns the adapter for a command by the base name of its argv[0]:
// codex, claude, gemini, goose, aider or opencode (a ".js" or ".exe" suffix
// is ignored), or the generic adapter.
func Detect(argv0 string) Adapter {
	if a, ok := adapters[programName(argv0)]; ok {
		return a
	}
	return generic{}
}

// Prepare detects the agent of argv and prepares its launch.
func Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	if len(argv) == 0 {
		return Launch{}, errors.New("no command to run")
	}
	if err := gw.validate(); err != nil {
		return Launch{}, err
	}
	return Detect(argv[0]).Prepare(argv, env, gw)
}

// NoProxy lists what agents reach without the proxy: the gateway's own
// routes on loopback.
const NoProxy = "127.0.0.1,::1,localhost"

// proxyEnv points every HTTP client that honours the usual variables at the
// gateway's proxy.
func proxyEnv(gw Gateway) map[string]string {
	p := gw.base()
	return map[string]string{
		"HTTP_PROXY": p, "HTTPS_PROXY": p, "ALL_PROXY": p,
		"http_proxy": p, "https_proxy": p, "all_proxy": p,
		"NO_PROXY": NoProxy, "no_proxy": NoProxy,
		URLEnv: p,
	}
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// flagValue finds a flag in args (before any "--") written as "--name
// value", "--name=value" or, for a one-letter name, "-n value" and
// "-nvalue". It returns the last occurrence, as CLIs let the last win.
func flagValue(args []string, names ...string) (value, spelled string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, n := range names {
			switch {
			case a == n && i+1 < len(args):
				value, spelled, ok = args[i+1], n, true
			case strings.HasPrefix(a, n+"="):
				value, spelled, ok = a[len(n)+1:], n, true
			case len(n) == 2 && n[0] == '-' && n[1] != '-' && strings.HasPrefix(a, n) && len(a) > 2 && a[2] != '-':
				value, spelled, ok = a[2:], n, true
			}
		}
	}
	return value, spelled, ok
}

// hasFlag reports whether one of names appears as an argument before "--".
func hasFlag(args []string, names ...string) (string, bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n {
				return n, true
			}
		}
	}
	return "", false
}

// TokenVars lists, sorted, the variables of l.Env that carry the gateway
// token, for the checks that look for credentials in the environment
// (environment-is-clean, secret-in-environment): they hold the per-run
// token, which is worthless outside the gateway, and never a real key.
func (l Launch) TokenVars() []string {
	token := l.Env[TokenEnv]
	var names []string
	for k, v := range l.Env {
		if token != "" && v == token {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}
