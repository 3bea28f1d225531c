package agents

import "strings"

// The agents below need no argv changes. gemini-cli gets the Gemini API's
// variables, goose its own spellings of the base URLs on top of the
// generic adapter's; the others read the OpenAI- and Anthropic-compatible
// variables of the generic adapter (aider reads OPENAI_API_BASE, its
// --openai-api-base). Each knows how its command line spells
// auto-approval.

type (
	gemini   struct{}
	goose    struct{}
	aider    struct{}
	opencode struct{}
	cline    struct{}
)

func init() {
	register(gemini{})
	register(goose{})
	register(aider{})
	register(opencode{})
	register(cline{})
}

func (gemini) Name() string   { return "gemini" }
func (goose) Name() string    { return "goose" }
func (aider) Name() string    { return "aider" }
func (opencode) Name() string { return "opencode" }
func (cline) Name() string    { return "cline" }

// Prepare points gemini-cli at the gateway's /google route: @google/genai
// takes its base URL from GOOGLE_GEMINI_BASE_URL and sends GEMINI_API_KEY
// (here the per-run token) as x-goog-api-key, which the gateway swaps for
// the real key. gemini-cli 0.61 reads a set GOOGLE_GEMINI_BASE_URL as its
// "gateway" auth type, which its own startup check then refuses ("Invalid
// auth method selected"): its settings must select the API-key type
// (security.auth.selectedType "gemini-api-key", in a trusted workspace's
// .gemini/settings.json or the user's), as the escape self-test's
// workspace does. GEMINI_TELEMETRY_ENABLED=false keeps its OpenTelemetry
// export off.
func (a gemini) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	e := merge(proxyEnv(gw), map[string]string{
		"GOOGLE_GEMINI_BASE_URL":   gw.base() + "/google",
		"GEMINI_API_KEY":           gw.Token,
		"GEMINI_TELEMETRY_ENABLED": "false",
		TokenEnv:                   gw.Token,
	})
	return Launch{Agent: a.Name(), Argv: append([]string(nil), argv...), Env: e, Permission: a.Permission(argv[1:], env)}, nil
}

// Prepare adds goose's own spellings of the base URLs to the generic
// variables: its openai provider joins OPENAI_HOST (an origin, here the
// gateway's /openai route) with OPENAI_BASE_PATH (v1/chat/completions),
// its anthropic provider reads ANTHROPIC_HOST; both read the key from
// OPENAI_API_KEY / ANTHROPIC_API_KEY (the token). The provider and model
// are the user's (GOOSE_PROVIDER, GOOSE_MODEL, or goose run --provider
// and --model).
func (a goose) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	l := genericLaunch(a.Name(), argv, gw, a.Permission(argv[1:], env))
	l.Env["OPENAI_HOST"] = gw.base() + "/openai"
	l.Env["OPENAI_BASE_PATH"] = "v1/chat/completions"
	l.Env["ANTHROPIC_HOST"] = gw.base() + "/anthropic"
	return l, nil
}

func (a aider) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	return genericLaunch(a.Name(), argv, gw, a.Permission(argv[1:], env)), nil
}

func (a opencode) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	return genericLaunch(a.Name(), argv, gw, a.Permission(argv[1:], env)), nil
}

func (a cline) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	return genericLaunch(a.Name(), argv, gw, a.Permission(argv[1:], env)), nil
}

// Permission reads each agent's mode from its flags and environment.
func (gemini) Permission(args []string, env map[string]string) Permission {
	return withEnv("gemini", geminiPermission(args), env)
}

func (goose) Permission(_ []string, env map[string]string) Permission { return goosePermission(env) }

func (aider) Permission(args []string, env map[string]string) Permission {
	return withEnv("aider", aiderPermission(args), env)
}

func (opencode) Permission(args []string, env map[string]string) Permission {
	return opencodePermission(args, env)
}

// Permission: cline's --yolo (-y) approves every action.
func (cline) Permission(args []string, _ map[string]string) Permission {
	if flag, ok := hasFlag(args, "--yolo", "-y"); ok {
		return Permission{Mode: "yolo", AutoApprove: true, Source: flag}
	}
	return Permission{Mode: "default", Source: "default"}
}

// geminiUntrusted is what gemini-cli does with an auto-approve mode in a
// folder it does not trust.
const geminiUntrusted = "gemini-cli turns it back into default approval in a folder it does not trust, unless --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true trusts the workspace"

// geminiPermission: --yolo (-y) or --approval-mode
// default|auto_edit|yolo|plan, gemini-cli's own choices (it has no
// environment variable for the mode). Auto-approve is recorded as asked
// for, since trust may come from the user's trustedFolders.json.
func geminiPermission(args []string) Permission {
	if flag, ok := hasFlag(args, "--yolo", "-y"); ok {
		return Permission{Mode: "yolo", AutoApprove: true, Source: flag, Note: geminiUntrusted}
	}
	if v, flag, ok := flagValue(args, "--approval-mode"); ok {
		p := Permission{Mode: v, Source: flag, AutoApprove: v == "yolo"}
		switch v {
		case "yolo":
			p.Note = geminiUntrusted
		case "auto_edit":
			p.Note = "file edits are applied without asking; commands still ask"
		}
		return p
	}
	return Permission{Mode: "default", Source: "default"}
}

// goosePermission: GOOSE_MODE, auto (fully autonomous, the default),
// approve, smart_approve or chat. The sandbox's HOME is fresh, so no goose
// config file changes the default.
func goosePermission(env map[string]string) Permission {
	mode, source := env["GOOSE_MODE"], "GOOSE_MODE"
	if mode == "" {
		mode, source = "auto", "default"
	}
	p := Permission{Mode: mode, Source: source, AutoApprove: strings.EqualFold(mode, "auto")}
	if strings.EqualFold(mode, "smart_approve") {
		p.Note = "goose approves the actions it rates low-risk without asking"
	}
	return p
}

// aiderPermission: --yes-always (formerly --yes) answers every prompt yes.
func aiderPermission(args []string) Permission {
	if flag, ok := hasFlag(args, "--yes-always", "--yes"); ok {
		return Permission{Mode: "yes-always", AutoApprove: true, Source: flag}
	}
	return Permission{Mode: "default", Source: "default"}
}

// opencodePermission: --dangerously-skip-permissions or --auto, or
// OPENCODE_DANGEROUSLY_SKIP_PERMISSIONS. Without them the mode comes from
// opencode's config (an opencode.json in the workspace, say), which the
// command line does not show.
func opencodePermission(args []string, env map[string]string) Permission {
	if flag, ok := hasFlag(args, "--dangerously-skip-permissions", "--auto"); ok {
		return Permission{Mode: "skip-permissions", AutoApprove: true, Source: flag}
	}
	if v := strings.ToLower(env["OPENCODE_DANGEROUSLY_SKIP_PERMISSIONS"]); v == "1" || v == "true" {
		return Permission{Mode: "skip-permissions", AutoApprove: true, Source: "OPENCODE_DANGEROUSLY_SKIP_PERMISSIONS"}
	}
	return Permission{
		Mode: "unknown", Source: "default",
		Note: "opencode's permission config decides, and the command line does not show it",
	}
}
