package audit

import (
	"github.com/agentbox/agentbox/agents"
)

// PermissionNoneFound is the mode of a container in which no agent's
// permission setting was found.
const PermissionNoneFound = "none found"

// PermissionMode is the permission mode of the agent in a container, as the
// lab asks users to record it beside the audit: which agent, its mode, and
// where the mode was found.
type PermissionMode struct {
	// Agent is the adapter's name (claude, codex, …); empty when none was
	// found.
	Agent string `json:"agent,omitempty"`
	// Mode is the agent's own name for the mode, or PermissionNoneFound.
	Mode string `json:"mode"`
	// Source is the flag, variable or setting that chose the mode
	// ("default" when the command line leaves the agent's default).
	Source string `json:"source,omitempty"`
	// Where says where Source was found: "command line", "environment" or
	// the settings file's path.
	Where string `json:"where,omitempty"`
	Location
}

// String is the report's permission_mode line, without its key.
func (p PermissionMode) String() string {
	if p.Agent == "" {
		return p.Mode
	}
	s := p.Agent + " " + p.Mode + " (" + p.Source
	if p.Where != "" {
		s += ", " + p.Where
	}
	if p.Line > 0 {
		s += " at " + locString(p.Location)
	}
	return s + ")"
}

// permissionOf finds c's permission mode. An auto-approve setting wins,
// in the order the command line, the environment, the agent's settings
// files; then the mode an agent on the command line runs in by default.
func permissionOf(c *Container) PermissionMode {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	argv, auto, onArgv := argvPermission(c, env)
	if onArgv && auto {
		return argv
	}
	for _, e := range c.Env {
		if agent, ok := agents.EnvAutoApprove(e.Name, e.Value); ok {
			return PermissionMode{Agent: agent, Mode: "auto-approve", Source: e.Name, Where: "environment", Location: OrLocation(e.Location, c.keyLocation("environment"))}
		}
	}
	for _, ac := range c.AgentConfigs {
		if ac.AutoApprove != "" {
			return PermissionMode{Agent: ac.Agent, Mode: ac.AutoApprove, Source: "settings", Where: ac.Path}
		}
	}
	if onArgv {
		return argv
	}
	return PermissionMode{Mode: PermissionNoneFound}
}

// argvPermission is the mode the first agent on c's command line selects,
// whether it runs without approval, and whether there is an agent there.
func argvPermission(c *Container, env map[string]string) (PermissionMode, bool, bool) {
	for _, args := range agentCommands(c.Argv()) {
		agent, p, _ := agents.PermissionOf(args, env)
		m := PermissionMode{Agent: agent, Mode: p.Mode, Source: p.Source, Where: "command line", Location: c.keyLocation("command")}
		return m, p.AutoApprove, true
	}
	return PermissionMode{}, false, false
}
