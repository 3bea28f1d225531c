package agents

import "strings"

// The agents below need no argv changes: they read the OpenAI- and
// Anthropic-compatible variables of the generic adapter. Each knows how its
// command line spells auto-approval.

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

func (a gemini) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	return genericLaunch(a.Name(), argv, gw, a.Permission(argv[1:], env)), nil
}

func (a goose) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	return genericLaunch(a.Name(), argv, gw, a.Permission(argv[1:], env)), nil
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

// geminiPermission: --yolo (-y) or --approval-mode yolo|auto_edit|default|plan.
func geminiPermission(args []string) Permission {
	if flag, ok := hasFlag(args, "--yolo", "-y"); ok {
		return Permission{Mode: "yolo", AutoApprove: true, Source: flag}
	}
	if v, flag, ok := flagValue(args, "--approval-mode"); ok {
		p := Permission{Mode: v, Source: flag, AutoApprove: v == "yolo"}
		if v == "auto_edit" {
			p.Note = "file edits are applied without asking; commands still ask"
		}
		return p
	}
	return Permission{Mode: "default", Source: "default"}
}

// goosePermission: GOOSE_MODE, whose default is auto (fully autonomous).
// The sandbox's HOME is fresh, so no goose config file changes the default.
func goosePermission(env map[string]string) Permission {
	mode, source := env["GOOSE_MODE"], "GOOSE_MODE"
	if mode == "" {
		mode, source = "auto", "default"
	}
	return Permission{Mode: mode, Source: source, AutoApprove: mode == "auto"}
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
