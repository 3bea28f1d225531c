package audit

import (
	"fmt"
	"path"
	"strings"
)

// agentNames are the agent programs whose flags are read.
var agentNames = wordSet("codex", "claude", "gemini", "goose", "aider", "opencode", "cline")

// approveFlag is one way an agent is told to act without asking. value, when
// set, is the flag value that means auto-approve (compared case-folded).
type approveFlag struct {
	agent, flag, value string
	// needsAgent: the flag is generic (--yolo, -y) and counts only after
	// the agent's own program name on the command line.
	needsAgent bool
}

var approveFlags = []approveFlag{
	{"codex", "--dangerously-bypass-approvals-and-sandbox", "", false},
	{"codex", "--yolo", "", true},
	{"codex", "--ask-for-approval", "never", true},
	{"codex", "-a", "never", true},
	{"codex", "--sandbox", "danger-full-access", true},
	{"codex", "-s", "danger-full-access", true},
	{"codex", "-c", "approval_policy=never", true},
	{"codex", "--config", "approval_policy=never", true},
	{"codex", "-c", "sandbox_mode=danger-full-access", true},
	{"codex", "--config", "sandbox_mode=danger-full-access", true},
	{"claude", "--dangerously-skip-permissions", "", false},
	{"claude", "--permission-mode", "bypasspermissions", true},
	{"gemini", "--yolo", "", true},
	{"gemini", "-y", "", true},
	{"gemini", "--approval-mode", "yolo", true},
	{"aider", "--yes-always", "", false},
	{"aider", "--yes", "", true},
	{"cline", "--yolo", "", true},
	{"cline", "-y", "", true},
	{"opencode", "--dangerously-skip-permissions", "", true},
}

// approveEnv are environment settings that switch an agent to auto-approve.
// match reports whether a value means auto-approve.
var approveEnv = []struct {
	agent, name string
	match       func(v string) bool
}{
	{"goose", "GOOSE_MODE", func(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "auto") }},
	{"aider", "AIDER_YES_ALWAYS", truthy},
	{"aider", "AIDER_YES", truthy},
	{"opencode", "OPENCODE_PERMISSION", func(v string) bool { return strings.Contains(v, `"allow"`) }},
	{"opencode", "OPENCODE_DANGEROUSLY_SKIP_PERMISSIONS", truthy},
	{"claude", "CLAUDE_CODE_DANGEROUSLY_SKIP_PERMISSIONS", truthy},
	{"gemini", "GEMINI_YOLO", truthy},
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// checkAutoApprove finds auto-approve in the command line, the environment
// and the agent configuration files. Alone it is informational.
func checkAutoApprove(c *Container, o *Options) []Finding {
	var out []Finding
	for _, hit := range approveInArgv(c.Argv()) {
		f := newFinding(CodeAutoApprove, hit, "the agent's command line turns approval off", c.keyLocation("command"))
		f.Evidence = "command: " + hit
		out = append(out, f)
	}
	for _, e := range c.Env {
		for _, a := range approveEnv {
			if strings.EqualFold(e.Name, a.name) && a.match(e.Value) {
				f := newFinding(CodeAutoApprove, e.Name, fmt.Sprintf("%s switches %s to acting without approval", e.Name, a.agent), orLocation(e.Location, c.keyLocation("environment")))
				f.Evidence = "env " + e.Name
				out = append(out, f)
			}
		}
	}
	for _, ac := range c.AgentConfigs {
		if ac.AutoApprove == "" {
			continue
		}
		f := newFinding(CodeAutoApprove, ac.Path, fmt.Sprintf("%s settings turn approval off: %s", ac.Agent, ac.AutoApprove), Location{File: ac.Path})
		f.Evidence = ac.Path + ": " + ac.AutoApprove
		out = append(out, f)
	}
	return out
}

// argvTokens splits every argument at white space, so that a shell command
// (sh -c "codex --yolo") is read like an argv.
func argvTokens(argv []string) []string {
	var out []string
	for _, a := range argv {
		out = append(out, strings.Fields(a)...)
	}
	return out
}

// approveInArgv returns each auto-approve flag found, as "agent flag".
func approveInArgv(argv []string) []string {
	toks := argvTokens(argv)
	var hits []string
	agent := ""
	for i, t := range toks {
		if name := path.Base(strings.Trim(t, `"'`)); agentNames[name] {
			agent = name
			continue
		}
		flag, val, hasVal := strings.Cut(strings.Trim(t, `"'`), "=")
		if !strings.HasPrefix(flag, "-") {
			continue
		}
		if !hasVal && i+1 < len(toks) {
			val = toks[i+1]
		}
		for _, af := range approveFlags {
			if af.flag != flag || af.needsAgent && agent != af.agent {
				continue
			}
			if af.value != "" && !strings.EqualFold(strings.Trim(val, `"'`), af.value) && !strings.EqualFold(strings.ReplaceAll(val, `"`, ""), af.value) {
				continue
			}
			hits = append(hits, strings.TrimSpace(af.agent+" "+t+optional(af.value != "" && !hasVal, " "+val)))
			break
		}
	}
	return hits
}

func optional(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}
