package agents

type generic struct{}

func (generic) Name() string { return "generic" }

// Prepare leaves argv alone and sets the proxy variables plus the OpenAI- and
// Anthropic-compatible base URLs and keys, all pointing at the gateway.
func (g generic) Prepare(argv []string, env map[string]string, gw Gateway) (Launch, error) {
	return genericLaunch(g.Name(), argv, gw, g.Permission(argv[1:], env)), nil
}

// Permission is unknown: agentbox does not know this command's flags.
func (generic) Permission([]string, map[string]string) Permission {
	return Permission{
		Mode: "unknown", Source: "default",
		Note: "agentbox does not know this command's permission flags",
	}
}

func genericLaunch(name string, argv []string, gw Gateway, p Permission) Launch {
	e := merge(proxyEnv(gw), map[string]string{
		"OPENAI_BASE_URL":    gw.base() + "/openai/v1",
		"OPENAI_API_BASE":    gw.base() + "/openai/v1",
		"OPENAI_API_KEY":     gw.Token,
		"ANTHROPIC_BASE_URL": gw.base() + "/anthropic",
		"ANTHROPIC_API_KEY":  gw.Token,
		TokenEnv:             gw.Token,
	})
	return Launch{Agent: name, Argv: append([]string(nil), argv...), Env: e, Permission: p}
}
