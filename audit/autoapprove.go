package audit

import (
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/agents"
)

// checkAutoApprove finds auto-approve in the command line, the environment
// and the agent configuration files. Alone it is informational.
func checkAutoApprove(c *Container, o *Options) []Finding {
	var out []Finding
	for _, hit := range approveInArgv(c.Argv()) {
		f := newFinding(CodeAutoApprove, hit.subject, "the agent's command line turns approval off ("+hit.mode+")", c.keyLocation("command"))
		f.Evidence = "command: " + hit.subject
		out = append(out, f)
	}
	for _, e := range c.Env {
		if agent, ok := agents.EnvAutoApprove(e.Name, e.Value); ok {
			f := newFinding(CodeAutoApprove, e.Name, fmt.Sprintf("%s switches %s to acting without approval", e.Name, agent), OrLocation(e.Location, c.keyLocation("environment")))
			f.Evidence = "env " + e.Name
			out = append(out, f)
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

// agentCommands finds each agent program on a command line (argv read as
// words, so that `sh -c "codex --yolo"` counts) and returns, for each, the
// words from the program's name on, unquoted: what its adapter reads.
func agentCommands(argv []string) [][]string {
	toks := argvTokens(argv)
	var out [][]string
	for i, t := range toks {
		if !agents.Known(t) {
			continue
		}
		args := make([]string, 0, len(toks)-i)
		for _, a := range toks[i:] {
			args = append(args, strings.Trim(a, `"'`))
		}
		out = append(out, args)
	}
	return out
}

// approveHit is one agent on a command line that runs without approval:
// "agent flag" (the flag, or "default", or the subcommand that chose it)
// and the mode as the agent names it.
type approveHit struct{ subject, mode string }

// approveInArgv returns, as "agent source" and mode, the auto-approve mode
// that each agent program on the command line selects by its flags, as
// package agents reads them (the one table of their spellings). A flag
// counts only after the agent's own program name: `apt-get -y` is not an
// agent's. Environment settings are judged separately (checkAutoApprove).
func approveInArgv(argv []string) []approveHit {
	var hits []approveHit
	for _, args := range agentCommands(argv) {
		agent, p, _ := agents.PermissionOf(args, nil)
		if p.AutoApprove {
			subject := agent + " " + p.Source
			if strings.HasPrefix(p.Source, agent+" ") { // "codex exec"
				subject = p.Source
			}
			hits = append(hits, approveHit{subject, p.Mode})
		}
	}
	return hits
}
