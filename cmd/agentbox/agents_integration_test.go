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
