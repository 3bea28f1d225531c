//go:build integration

package launcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// agentCache is where scripts/agents-install.sh (run by make test) puts
// the real CLIs.
func agentCache() string {
	if d := os.Getenv("AGENTBOX_AGENTS_CACHE"); d != "" {
		return d
	}
	return "/var/cache/agentbox-test/npm"
}

// cachedAgent copies the npm prefix install of pkg out of the cache (which
// is under /var, a system directory the sandbox does not see) and returns
// the path of its bin/NAME.
func cachedAgent(t *testing.T, pkg, name string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(agentCache(), pkg+"@*", "prefix", ".done"))
	if len(matches) == 0 {
		testutil.Skip(t, pkg+" is not in "+agentCache()+": run scripts/agents-install.sh")
		return ""
	}
	dst := filepath.Join(shortTempDir(t, "abe-"), "install")
	if out, err := exec.Command("cp", "-al", filepath.Dir(matches[0]), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return filepath.Join(dst, "bin", name)
}

// agentSelfTest runs the escape-prompt self-test of agent with private
// state, a fake real key in the environment, and weaken on the bundle.
func agentSelfTest(t *testing.T, agent string, weaken func(*specs.Spec), weakenInit func(*selftest.InitConfig)) AgentTestResult {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "sk-real-openai-escape-test-key")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-real-escape-test-key")
	vars := map[string]string{"AGENTBOX_STATE_DIR": t.TempDir(), "AGENTBOX_RUN_ROOT": shortTempDir(t, "abp-")}
	getenv := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	var out syncBuffer
	cfg := Config{
		Sources: policy.Sources{EUID: uint32(os.Geteuid())}, Stdout: &out, Stderr: &out, Getenv: getenv,
		InitPath: probeInitBinary(t), Weaken: weaken, WeakenInit: weakenInit,
	}
	res, err := AgentSelfTest(t.Context(), cfg, agent)
	if res.AgentLog != "" {
		t.Cleanup(func() { os.Remove(res.AgentLog) })
	}
	var table strings.Builder
	PrintAttempts(&table, res)
	t.Logf("%s\n%s", table.String(), out.String())
	if err != nil {
		t.Fatalf("selftest --agent %s: %v", agent, err)
	}
	return res
}

// The real codex and Claude Code, in their auto-approve modes, driven by
// the scripted model: every escape is DENY, both controls ALLOW, and the
// canaries and the real key never reach a request body.
func TestAgentSelfTestRealCLIs(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct{ pkg, name, shape string }{
		{"@openai/codex", "codex", "responses "},
		{"@anthropic-ai/claude-code", "claude", "messages Bash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := agentSelfTest(t, cachedAgent(t, tc.pkg, tc.name), nil, nil)
			if res.ExitCode != ExitOK || len(res.AttemptsFailed) > 0 {
				t.Errorf("exit %d, failed %+v", res.ExitCode, res.AttemptsFailed)
			}
			if len(res.Attempts) != len(res.Record.Attempts) || len(res.Attempts) < 11 {
				t.Errorf("%d results, %d in the record", len(res.Attempts), len(res.Record.Attempts))
			}
			if len(res.Shapes) != 1 || !strings.HasPrefix(res.Shapes[0], tc.shape) {
				t.Errorf("tool shapes %v, want %s…", res.Shapes, tc.shape)
			}
			for _, a := range res.Record.Attempts {
				if a.Name == "mount-tmpfs" && !strings.Contains(a.DeniedBy, "seccomp mount") {
					t.Errorf("mount-tmpfs is not in the denial log: %+v", a)
				}
			}
		})
	}
}

// A sandbox whose seccomp filter lets ptrace and unshare through (still a
// filter, so that the host's check of the seccomp mode passes) lets the
// agent ptrace its own child: the verdict must fail on ptrace. The
// in-sandbox probes, which would refuse that sandbox before the agent
// starts, are turned off, so that the attempt is what finds it.
func TestAgentSelfTestWeakened(t *testing.T) {
	testutil.RequireRoot(t)
	noProbes := func(c *selftest.InitConfig) { c.Probes = []string{} }
	res := agentSelfTest(t, cachedAgent(t, "@anthropic-ai/claude-code", "claude"), allowingSyscalls("ptrace", "unshare"), noProbes)
	if res.ExitCode == ExitOK || len(res.AttemptsFailed) == 0 {
		t.Fatalf("a sandbox that allows ptrace passed the escape self-test: exit %d", res.ExitCode)
	}
	decided := map[string]selftest.Decision{}
	for _, r := range res.Attempts {
		decided[r.Probe] = r.Decision
	}
	if decided["ptrace"] != selftest.Allow {
		t.Errorf("ptrace is %s with the filter allowing it", decided["ptrace"])
	}
	if decided["workspace-write"] != selftest.Allow || decided["gateway-reach"] != selftest.Allow {
		t.Errorf("a control failed: %+v", res.Attempts)
	}
}

// allowingSyscalls takes names out of every seccomp rule and allows them
// unconditionally.
func allowingSyscalls(names ...string) func(*specs.Spec) {
	return func(s *specs.Spec) {
		sc := s.Linux.Seccomp
		var rules []specs.LinuxSyscall
		for _, r := range sc.Syscalls {
			r.Names = slices.DeleteFunc(slices.Clone(r.Names), func(n string) bool { return slices.Contains(names, n) })
			if len(r.Names) > 0 {
				rules = append(rules, r)
			}
		}
		sc.Syscalls = append(rules, specs.LinuxSyscall{Names: names, Action: specs.ActAllow})
	}
}
