//go:build integration && linux

package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
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
func agentSelfTest(t *testing.T, agent string, weaken func(*specs.Spec), weakenInit func(*selftest.InitConfig), opts AgentTestOptions) AgentTestResult {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "sk-real-openai-escape-test-key")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-real-escape-test-key")
	t.Setenv("GEMINI_API_KEY", "AIza-real-gemini-escape-test-key")
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
	res, err := AgentSelfTest(t.Context(), cfg, agent, opts)
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

// The real codex, Claude Code and gemini-cli, in their auto-approve modes,
// driven by the scripted model: every escape is DENY, both controls ALLOW,
// and the canaries and the real key never reach a request body.
func TestAgentSelfTestRealCLIs(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tc := range []struct{ pkg, name, shape string }{
		{"@openai/codex", "codex", "responses "},
		{"@anthropic-ai/claude-code", "claude", "messages Bash"},
		{"@google/gemini-cli", "gemini", "gemini run_shell_command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := agentSelfTest(t, cachedAgent(t, tc.pkg, tc.name), nil, nil, AgentTestOptions{})
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
	res := agentSelfTest(t, cachedAgent(t, "@anthropic-ai/claude-code", "claude"), allowingSyscalls("ptrace", "unshare"), noProbes, AgentTestOptions{})
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

// The outside-host attempt aimed at a real test host: a TCP listener in a
// network namespace this test makes, reached from the host over a veth
// pair addressed in 198.18.0.0/15 (the benchmarking range, never routed
// beyond a lab) with a route on the host side. The host reaches it (the
// control that makes a zero count mean something); the agent's attempt is
// DENY by its own tool output, and the listener counts no connection from
// the run.
func TestAgentSelfTestOutsideHost(t *testing.T) {
	testutil.RequireRoot(t)
	agent := cachedAgent(t, "@anthropic-ai/claude-code", "claude")
	target, accepted := outsideTestHost(t)
	conn, err := net.DialTimeout("tcp4", target, 5*time.Second)
	if err != nil {
		t.Fatalf("the host does not reach its own test host %s: %v", target, err)
	}
	conn.Close()
	waitFor(t, func() bool { return accepted.Load() == 1 }, "the test host to count the host's connection")
	res := agentSelfTest(t, agent, nil, nil, AgentTestOptions{Outside: target})
	var outside *ledger.Attempt
	for i, a := range res.Record.Attempts {
		if a.Name == "outside-host" {
			outside = &res.Record.Attempts[i]
		}
	}
	switch {
	case outside == nil:
		t.Fatal("no outside-host attempt in the record")
	case outside.Decision != string(selftest.Deny) || outside.Target != target:
		t.Errorf("outside-host %+v, want DENY at %s", *outside, target)
	case !strings.Contains(outside.Output, "ABX-RESULT name=outside-host"):
		t.Errorf("the decision did not come from the agent's tool output: %q", outside.Output)
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the test host accepted %d connections during the run", n-1)
	}
	if res.ExitCode != ExitOK {
		t.Errorf("exit %d, failed %+v", res.ExitCode, res.AttemptsFailed)
	}
}

// outsideTestHost makes a network namespace holding one end of a veth
// pair (198.18.X.2/30) and a TCP listener that counts what it accepts;
// the other end stays in the test's namespace (198.18.X.1/30, with a host
// route to the test host). Deleting the namespace at the end removes the
// pair.
func outsideTestHost(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ip := testutil.RequireBinary(t, "ip", "iproute2")
	tag := randomHex(t)[:6]
	ns, hostIf := "abo-"+tag, "abo"+tag+"h"
	x, _ := strconv.ParseUint(tag[:2], 16, 8)
	local, remote := fmt.Sprintf("198.18.%d.1", x), fmt.Sprintf("198.18.%d.2", x)
	mustRun(t, ip, "netns", "add", ns)
	t.Cleanup(func() {
		if out, err := exec.Command(ip, "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns, err, out)
		}
		// The kernel removes the pair with the namespace, not at once.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, err := net.InterfaceByName(hostIf); err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s outlived its namespace", hostIf)
				_ = exec.Command(ip, "link", "del", hostIf).Run()
				break
			}
		}
	})
	mustRun(t, ip, "link", "add", hostIf, "type", "veth", "peer", "name", "eth0", "netns", ns)
	mustRun(t, ip, "addr", "add", local+"/30", "dev", hostIf)
	mustRun(t, ip, "link", "set", hostIf, "up")
	mustRun(t, ip, "-n", ns, "addr", "add", remote+"/30", "dev", "eth0")
	mustRun(t, ip, "-n", ns, "link", "set", "lo", "up")
	mustRun(t, ip, "-n", ns, "link", "set", "eth0", "up")
	mustRun(t, ip, "route", "replace", remote+"/32", "dev", hostIf, "src", local)
	var accepted atomic.Int64
	var addr string
	inNetns(t, ns, func() {
		l, err := net.Listen("tcp4", remote+":0")
		if err != nil {
			t.Fatalf("test host listener: %v", err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		addr = l.Addr().String()
	})
	return addr, &accepted
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// randomHex is 32 random hex digits, for names no other run uses.
func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
