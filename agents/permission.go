package agents

import (
	"path/filepath"
	"strings"
)

// This file is the one table of how agents spell auto-approval: the
// adapters' Permission methods read flags, and autoApproveEnv the
// environment settings. `agentbox run` records what it finds, and the
// audit (auto-approve-permission-mode) asks the same functions about
// someone else's container.

// programName is the agent name of a program path: its base name without
// a ".js", ".mjs" or ".exe" suffix.
func programName(argv0 string) string {
	name := filepath.Base(strings.Trim(argv0, `"'`))
	for _, suffix := range []string{".js", ".mjs", ".exe"} {
		name = strings.TrimSuffix(name, suffix)
	}
	return name
}

// Known reports whether argv0 is a program one of the adapters knows.
func Known(argv0 string) bool {
	_, ok := adapters[programName(argv0)]
	return ok
}

// PermissionOf is the permission mode a command selects, as its adapter
// reads it (argv[0] names the agent; env is its environment, nil when
// unknown). It returns the adapter's name; known is false for a command
// that is no agent agentbox knows (the generic adapter: mode "unknown").
func PermissionOf(argv []string, env map[string]string) (agent string, p Permission, known bool) {
	if len(argv) == 0 {
		return "generic", generic{}.Permission(nil, env), false
	}
	a := Detect(argv[0])
	return a.Name(), a.Permission(argv[1:], env), Known(argv[0])
}

// autoApproveEnv are environment settings that switch an agent to
// auto-approve; match reports whether a value means it.
var autoApproveEnv = []struct {
	agent, name string
	match       func(v string) bool
}{
	{"goose", "GOOSE_MODE", func(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "auto") }},
	{"aider", "AIDER_YES_ALWAYS", truthy},
	{"aider", "AIDER_YES", truthy},
	{"opencode", "OPENCODE_PERMISSION", func(v string) bool { return strings.Contains(v, `"allow"`) }},
	{"opencode", "OPENCODE_DANGEROUSLY_SKIP_PERMISSIONS", truthy},
	{"claude", "CLAUDE_CODE_DANGEROUSLY_SKIP_PERMISSIONS", truthy},
}

// EnvAutoApprove reports whether the setting name=value switches an agent
// to auto-approve, and which agent. Names compare case-insensitively.
func EnvAutoApprove(name, value string) (agent string, ok bool) {
	for _, e := range autoApproveEnv {
		if strings.EqualFold(e.name, name) && e.match(value) {
			return e.agent, true
		}
	}
	return "", false
}

// withEnv raises p to auto-approve when one of agent's environment settings
// says so.
func withEnv(agent string, p Permission, env map[string]string) Permission {
	if p.AutoApprove {
		return p
	}
	for k, v := range env {
		if a, ok := EnvAutoApprove(k, v); ok && a == agent {
			return Permission{Mode: p.Mode, AutoApprove: true, Source: k, Note: k + " turns approval off"}
		}
	}
	return p
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
