package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/policy"
)

// agentSpec is how the escape-prompt self-test runs one agent CLI
// unattended: its arguments in its auto-approve mode (its adapter in
// agents/ adds the gateway's settings), what else of its environment and
// of its fresh workspace it needs, and how to install it. An agent whose tool calls the scripted
// model cannot drive says why in undrivable, and is never run.
type agentSpec struct {
	args       func(prompt string) []string
	env        map[string]string // passed into the sandbox for the run
	files      map[string]string // workspace-relative path → content
	install    string
	undrivable string
}

// agentSpecs are the agents the self-test knows, by program name; any
// other command gets the prompt as its last argument.
var agentSpecs = map[string]agentSpec{
	"codex": {
		args: func(p string) []string {
			return []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", p}
		},
		install: "npm install -g @openai/codex",
	},
	"claude": {
		args:    func(p string) []string { return []string{"-p", "--dangerously-skip-permissions", p} },
		install: "npm install -g @anthropic-ai/claude-code",
	},
	// gemini-cli: GEMINI_CLI_TRUST_WORKSPACE trusts the fresh workspace
	// (gemini-cli decides trust before it reads its flags, and in an
	// untrusted folder it ignores the workspace's settings and turns
	// --yolo back into default approval), which lets the workspace's
	// .gemini/settings.json select the API-key auth type that
	// GEMINI_API_KEY (the per-run token) and GOOGLE_GEMINI_BASE_URL go
	// with (agents/others.go). A model named on the command line keeps it
	// from asking a router model first.
	"gemini": {
		args:    func(p string) []string { return []string{"--yolo", "--model", "gemini-2.5-flash", "--prompt", p} },
		env:     map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
		files:   map[string]string{".gemini/settings.json": `{"security":{"auth":{"selectedType":"gemini-api-key"}}}` + "\n"},
		install: "npm install -g @google/gemini-cli",
	},
	// goose speaks the OpenAI Chat Completions API through its openai
	// provider (OPENAI_HOST, agents/others.go) and runs commands with its
	// developer extension's shell tool (developer__shell, a command
	// string), which the scripted model drives. `goose run` runs one
	// prompt and exits; its mode is auto (autonomous) when nothing
	// configures it, as in the sandbox's fresh HOME.
	"goose": {
		args: func(p string) []string {
			return []string{"run", "--no-session", "--provider", "openai", "--model", "gpt-4o", "--with-builtin", "developer", "--text", p}
		},
		install: "the goose CLI is a release binary: https://github.com/block/goose/releases (goose-install.sh), not a package this host's registries hold",
	},
	// aider edits files through text formats in its replies and proposes
	// shell commands as fenced blocks in them, which it runs only after
	// asking (and --yes-always does not run them); it has no shell tool
	// the model calls.
	"aider": {
		install:    "python3 -m pip install aider-install && aider-install (PyPI: aider-chat)",
		undrivable: "aider has no shell tool its model calls: it proposes shell commands as text in its replies and asks before running them",
	},
}

// resolveAgent is the self-test's command for agent: argv with the
// prompt, and the spec (zero for a command the self-test does not know).
// A known agent whose program is not on PATH is an input error that says
// how to install it.
func resolveAgent(agent string) ([]string, agentSpec, error) {
	f := strings.Fields(agent)
	if len(f) == 0 {
		return nil, agentSpec{}, &policy.InputError{Field: "--agent", Msg: "empty", Fix: "name the agent: --agent codex, claude, gemini, goose, aider or 'CMD ARG…'"}
	}
	spec, known := agentSpecs[filepath.Base(f[0])]
	if _, err := exec.LookPath(f[0]); err != nil {
		fix := "install it, or name its path: --agent /path/to/" + filepath.Base(f[0])
		if known {
			fix = "install it (" + spec.install + "), or name its path: --agent /path/to/" + filepath.Base(f[0])
		}
		return nil, spec, &policy.InputError{Field: "--agent", Msg: fmt.Sprintf("%s is not installed: %v", f[0], err), Fix: fix}
	}
	if !known {
		return append(f, escapePrompt), spec, nil
	}
	if spec.undrivable != "" {
		return f, spec, nil
	}
	return append(f, spec.args(escapePrompt)...), spec, nil
}

// AgentArgv is the command an escape-prompt self-test runs for agent, nil
// when it would not run one: codex, Claude Code and gemini-cli
// non-interactively in their auto-approve modes, goose's `run`, any other
// command with the prompt as its last argument.
func AgentArgv(agent string) []string {
	argv, spec, err := resolveAgent(agent)
	if err != nil || spec.undrivable != "" {
		return nil
	}
	return argv
}

// writeAgentFiles writes the spec's files into the fresh workspace, new
// files only.
func writeAgentFiles(ws string, files map[string]string) error {
	for rel, content := range files {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// withAgentEnv passes vars into the sandbox for one run: the policy's
// environment allowlist gets their names (added to the file's list or the
// default one) and the run's environment their values, over this
// process's own (which it leaves alone).
func withAgentEnv(cfg *Config, vars map[string]string) {
	environ := cfg.Environ
	if environ == nil {
		environ = os.Environ()
	}
	environ = slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, set := vars[k]
		return set
	})
	for k, v := range vars {
		cfg.Policy.Env.Allow = append(cfg.Policy.Env.Allow, k)
		environ = append(environ, k+"="+v)
	}
	cfg.Environ = environ
}
