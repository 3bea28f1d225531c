//go:build integration && linux

package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/netpolicy/fakemodel"
)

// The real Codex CLI and Claude Code, in their non-interactive auto-approve
// modes, under `agentbox run` with no flag but the upstream: each reaches a
// fake model server on the host's loopback only through the run's gateway.
// The server sees the real key and never the per-run token, and the agent's
// environment never holds the real key. (scripts/gateway-install-agents.sh
// installs both CLIs from the npm registry.)
func TestRealAgentsThroughTheGateway(t *testing.T) {
	uid, gid := testUser(t)
	const reply = "agentbox-e2e-reply"
	realOpenAI, realAnthropic := "sk-real-openai-"+randomHex(t), "sk-ant-real-"+randomHex(t)
	for _, tc := range []struct {
		name, pkg, route string
		args             []string
	}{
		{"codex", "@openai/codex", "openai", []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Say hello."}},
		{"claude", "@anthropic-ai/claude-code", "anthropic", []string{"-p", "--dangerously-skip-permissions", "Say hello."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testutil.RequireBinary(t, tc.name, "npm: "+tc.pkg+" (scripts/gateway-install-agents.sh)")
			fake := fakemodel.New(reply)
			upstream := httptest.NewServer(fake) // 127.0.0.1 of the host, which the sandbox cannot reach
			defer upstream.Close()
			ws := workspaceOwnedBy(t, uid, gid)
			env := isolatedEnv(t, "OPENAI_API_KEY="+realOpenAI, "ANTHROPIC_API_KEY="+realAnthropic)
			evidence := filepath.Join(t.TempDir(), "evidence.jsonl")
			args := append([]string{"run", "--json", "--evidence", evidence, "--upstream", tc.route + "=" + upstream.URL, "--", tc.name}, tc.args...)
			r := runIn(t, env, ws, args...)
			data, _ := os.ReadFile(evidence)
			if !strings.Contains(string(data), `"event":"record"`) {
				t.Errorf("no record on the evidence channel:\n%s", data)
			}
			if r.code != 0 || !strings.Contains(r.stdout, reply) {
				t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !fake.Saw(realOpenAI) && !fake.Saw(realAnthropic) {
				t.Error("the fake model never saw the real key")
			}
			for _, req := range fake.Requests() {
				if strings.Contains(fmt.Sprint(req.Header), netpolicy.TokenPrefix) || strings.Contains(req.Body, netpolicy.TokenPrefix) {
					t.Errorf("the fake model saw the per-run token in %s %s", req.Method, req.Path)
				}
			}
			for _, line := range strings.Split(r.stderr+string(data), "\n") {
				if strings.Contains(line, realOpenAI) || strings.Contains(line, realAnthropic) {
					t.Errorf("a real key reached the evidence: %s", line)
				}
				if strings.Contains(line, `"record"`) && (!strings.Contains(line, `"agent":"`+tc.name+`"`) || !strings.Contains(line, `"allowed":`)) {
					t.Errorf("record lacks the agent or the gateway counts: %s", line)
				}
			}
		})
	}
	t.Run("environment", func(t *testing.T) {
		ws := workspaceOwnedBy(t, uid, gid)
		env := isolatedEnv(t, "OPENAI_API_KEY="+realOpenAI, "ANTHROPIC_API_KEY="+realAnthropic)
		r := runIn(t, env, ws, "run", "--", "env")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if strings.Contains(r.stdout, realOpenAI) || strings.Contains(r.stdout, realAnthropic) {
			t.Error("the sandbox's environment holds a real key")
		}
		if !strings.Contains(r.stdout, "OPENAI_API_KEY="+netpolicy.TokenPrefix) {
			t.Errorf("the generic adapter did not hand over the per-run token:\n%s", r.stdout)
		}
	})
}

// copiedAgent copies the npm prefix install of pkg out of the cache and
// returns its bin directory. The cache is under /var, a system directory
// the sandbox does not show, and a copy, not hard links: an unprivileged
// user may not link files it does not own (fs.protected_hardlinks).
func copiedAgent(t *testing.T, pkg string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(agentsCache(), pkg+"@*", "prefix", ".done"))
	if len(matches) == 0 {
		testutil.Skip(t, pkg+" is not in "+agentsCache()+": run scripts/agents-install.sh as root")
		return ""
	}
	return filepath.Join(copyTree(t, filepath.Dir(matches[0])), "bin")
}

// `agentbox selftest --agent` as an unprivileged user (scripts/
// test-rootless.sh runs it as agentbox-test): the real codex, Claude Code
// and gemini-cli, each escape DENY and both controls ALLOW, as in the root
// run, and no real key in what agentbox printed.
func TestAgentSelfTestRootless(t *testing.T) {
	testutil.RequireNonRoot(t)
	realOpenAI, realAnthropic, realGemini := "sk-real-openai-"+randomHex(t), "sk-ant-real-"+randomHex(t), "AIza-real-"+randomHex(t)
	for _, tc := range []struct{ pkg, name, shape string }{
		{"@openai/codex", "codex", "tool shapes responses "},
		{"@anthropic-ai/claude-code", "claude", "tool shapes messages Bash;"},
		{"@google/gemini-cli", "gemini", "tool shapes gemini run_shell_command;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := copiedAgent(t, tc.pkg)
			env := isolatedEnv(t, "OPENAI_API_KEY="+realOpenAI, "ANTHROPIC_API_KEY="+realAnthropic, "GEMINI_API_KEY="+realGemini)
			for i, kv := range env {
				if p, ok := strings.CutPrefix(kv, "PATH="); ok {
					env[i] = "PATH=" + bin + ":" + p
				}
			}
			r := runIn(t, env, t.TempDir(), "selftest", "--agent", tc.name)
			if r.code != 0 || !strings.Contains(r.stdout, "PASS: 11 of 11 attempts as expected") || !strings.Contains(r.stdout, tc.shape) {
				t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			rows := map[string]int{}
			for _, line := range strings.Split(r.stdout, "\n") {
				f := strings.Fields(line)
				if len(f) < 3 || (f[1] != "DENY" && f[1] != "ALLOW") {
					continue
				}
				if f[2] != f[1] {
					t.Errorf("%s: %s, want %s", f[0], f[2], f[1])
				}
				rows[f[1]]++
			}
			if rows["DENY"] != 9 || rows["ALLOW"] != 2 {
				t.Errorf("attempts %v, want 9 DENY and 2 ALLOW:\n%s", rows, r.stdout)
			}
			if out := r.stdout + r.stderr; strings.Contains(out, realOpenAI) || strings.Contains(out, realAnthropic) || strings.Contains(out, realGemini) {
				t.Error("a real key reached agentbox's output")
			}
		})
	}
}
