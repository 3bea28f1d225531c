package agents

import (
	"strconv"
	"strings"
)

// ProviderID is the model provider the codex adapter defines.
const ProviderID = "agentbox"

type codex struct{}

func init() { register(codex{}) }

func (codex) Name() string { return "codex" }

// codexOverrides are the -c KEY=VALUE config overrides that point codex at
// the gateway. Values are TOML; codex applies -c overrides over every config
// file (and codex 0.171 refuses the legacy `profile` key, so the overrides
// do not try to pin a profile). A later -c on the user's own command line
// can still change them.
func codexOverrides(gw Gateway) []string {
	q := strconv.Quote
	return []string{
		"model_provider=" + q(ProviderID),
		"model_providers." + ProviderID + ".name=" + q("agentbox gateway"),
		"model_providers." + ProviderID + ".base_url=" + q(gw.base()+"/openai/v1"),
		"model_providers." + ProviderID + ".env_key=" + q(TokenEnv),
		"model_providers." + ProviderID + ".wire_api=" + q("responses"),
		"check_for_update_on_startup=false",
		"analytics.enabled=false",
		"feedback.enabled=false",
		"otel.exporter=" + q("none"),
		"otel.trace_exporter=" + q("none"),
		"otel.metrics_exporter=" + q("none"),
	}
}

func (c codex) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	out := []string{argv[0]}
	for _, o := range codexOverrides(gw) {
		out = append(out, "-c", o)
	}
	out = append(out, argv[1:]...)
	return Launch{
		Agent:      c.Name(),
		Argv:       out,
		Env:        merge(proxyEnv(gw), map[string]string{TokenEnv: gw.Token}),
		Permission: c.Permission(argv[1:], env),
	}, nil
}

// Permission reads codex's approval policy and sandbox mode.
func (codex) Permission(args []string, _ map[string]string) Permission { return codexPermission(args) }

// codexValueFlags are codex options that take a value, so that their value
// is not mistaken for a subcommand.
var codexValueFlags = map[string]bool{
	"-c": true, "--config": true, "-m": true, "--model": true, "-p": true, "--profile": true,
	"-s": true, "--sandbox": true, "-a": true, "--ask-for-approval": true, "-C": true, "--cd": true,
	"-i": true, "--image": true, "--add-dir": true, "--color": true, "-o": true,
	"--output-last-message": true, "--output-schema": true, "--enable": true, "--disable": true,
	"--local-provider": true,
}

// codexSubcommand returns the first positional argument (exec, e, resume, ...).
func codexSubcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case codexValueFlags[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// codexConfig finds the last -c/--config override of key and returns its
// value with TOML quotes removed.
func codexConfig(args []string, key string) (string, bool) {
	var val string
	var found bool
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		var kv string
		switch {
		case (a == "-c" || a == "--config") && i+1 < len(args):
			kv, i = args[i+1], i+1
		case strings.HasPrefix(a, "--config="):
			kv = a[len("--config="):]
		default:
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == key {
			val, found = strings.Trim(strings.TrimSpace(v), `"'`), true
		}
	}
	return val, found
}

// codexPermission reads codex's approval policy and sandbox mode from its
// flags. `codex exec` never asks (it has no one to ask), so its default
// approval policy is never, in a read-only sandbox.
func codexPermission(args []string) Permission {
	approval, sandbox, source := "on-request", "default", "default"
	if sub := codexSubcommand(args); sub == "exec" || sub == "e" {
		approval, sandbox, source = "never", "read-only", "codex exec"
	}
	if v, ok := codexConfig(args, "approval_policy"); ok {
		approval, source = v, "-c approval_policy"
	}
	if v, ok := codexConfig(args, "sandbox_mode"); ok {
		sandbox, source = v, "-c sandbox_mode"
	}
	if v, flag, ok := flagValue(args, "-a", "--ask-for-approval"); ok {
		approval, source = v, flag
	}
	if v, flag, ok := flagValue(args, "-s", "--sandbox"); ok {
		sandbox, source = v, flag
	}
	fullAuto := false
	if flag, ok := hasFlag(args, "--full-auto"); ok {
		approval, sandbox, source, fullAuto = "on-request", "workspace-write", flag, true
	}
	if flag, ok := hasFlag(args, "--dangerously-bypass-approvals-and-sandbox", "--yolo"); ok {
		return Permission{
			Mode: "approval=never sandbox=danger-full-access", AutoApprove: true, Source: flag,
			Note: "codex runs every command without asking and without its own sandbox; agentbox's sandbox is the only boundary",
		}
	}
	p := Permission{
		Mode: "approval=" + approval + " sandbox=" + sandbox, Source: source,
		AutoApprove: fullAuto || approval == "never" || approval == "on-failure",
	}
	if sandbox == "danger-full-access" {
		p.Note = "codex's own sandbox is off; agentbox's sandbox is the only boundary"
	}
	return p
}
