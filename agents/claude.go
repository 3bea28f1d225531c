package agents

type claude struct{}

func init() { register(claude{}) }

func (claude) Name() string { return "claude" }

// Prepare points Claude Code at the gateway's /anthropic route. The token
// goes in ANTHROPIC_AUTH_TOKEN (sent as a bearer token), which Claude Code
// uses without a login or an API-key approval prompt; the gateway swaps it
// for the real key. IS_SANDBOX=1 tells Claude Code it runs in a sandbox,
// which it is: without it, Claude Code refuses --dangerously-skip-permissions
// to a process whose uid is 0, as the agent's is inside some sandboxes.
func (c claude) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	e := merge(proxyEnv(gw), map[string]string{
		"ANTHROPIC_BASE_URL":                       gw.base() + "/anthropic",
		"ANTHROPIC_AUTH_TOKEN":                     gw.Token,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"IS_SANDBOX":                               "1",
		TokenEnv:                                   gw.Token,
	})
	return Launch{Agent: c.Name(), Argv: append([]string(nil), argv...), Env: e, Permission: c.Permission(argv[1:], env)}, nil
}

// Permission reads Claude Code's permission mode from its flags and
// environment.
func (claude) Permission(args []string, env map[string]string) Permission {
	return withEnv("claude", claudePermission(args), env)
}

// claudePermission reads Claude Code's permission mode from its flags.
func claudePermission(args []string) Permission {
	if flag, ok := hasFlag(args, "--dangerously-skip-permissions"); ok {
		return Permission{Mode: "bypassPermissions", AutoApprove: true, Source: flag}
	}
	p := Permission{Mode: "default", Source: "default"}
	if v, flag, ok := flagValue(args, "--permission-mode"); ok {
		p.Mode, p.Source = v, flag
	}
	switch p.Mode {
	case "bypassPermissions":
		p.AutoApprove = true
	case "auto":
		p.AutoApprove = true
		p.Note = "a classifier, not a person, approves each tool call"
	case "acceptEdits":
		p.Note = "file edits are applied without asking; commands still ask"
	}
	if flag, ok := hasFlag(args, "--allow-dangerously-skip-permissions"); ok && !p.AutoApprove {
		p.Note = flag + " lets the session switch to bypassPermissions"
	}
	return p
}
