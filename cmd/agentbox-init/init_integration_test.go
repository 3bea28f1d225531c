//go:build integration && linux

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/selftest"
)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	buildDir, _ = os.MkdirTemp("", "agentbox-init-test-")
	code := m.Run()
	os.RemoveAll(buildDir)
	os.Exit(code)
}

// buildInit builds agentbox-init statically, once per test binary.
func buildInit(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() { built, buildErr = build(filepath.Join(buildDir, "agentbox-init")) })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func build(bin string) (string, error) {
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %w\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("agentbox-init is dynamically linked")
		}
	}
	return bin, nil
}

// startInit runs bin with the launcher's socketpair end as fd 3 and sends
// it cfg.
func startInit(t *testing.T, bin string, cfg selftest.InitConfig) (*selftest.Launcher, *exec.Cmd) {
	t.Helper()
	return startInitFor(t, bin, func(int) selftest.InitConfig { return cfg })
}

// startInitFor is startInit with a config made for init's pid.
func startInitFor(t *testing.T, bin string, cfg func(initPID int) selftest.InitConfig) (*selftest.Launcher, *exec.Cmd) {
	t.Helper()
	l, initEnd, err := selftest.NewLauncher()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.ExtraFiles = []*os.File{initEnd}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	initEnd.Close()
	t.Cleanup(func() { l.Close(); cmd.Process.Kill(); cmd.Wait() })
	if err := l.Configure(cfg(cmd.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	return l, cmd
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestInitProtocolLandlockAndExitCode(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	secret := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(secret, []byte("x"), 0o644)
	cfg := selftest.InitConfig{
		Version: selftest.ProtocolVersion, RunID: "it-init", WaitGo: true,
		Probes: []string{"environment-is-clean", "gateway-reachable"},
		Agent: selftest.Command{
			Args: []string{"sh", "-c", "cat " + secret + " 2>/dev/null && exit 1; exit 7"},
			Env:  []string{"PATH=/usr/bin:/bin"},
		},
		Landlock: &selftest.LandlockPlan{MinABI: 1, Paths: []selftest.LandlockPath{
			{Path: "/usr"},
			{Path: "/bin"},
			{Path: "/lib"},
			{Path: "/lib64", Optional: true},
			{Path: "/etc"},
			{Path: "/dev", Write: true, IoctlDev: true},
			{Path: "/nonexistent-optional", Optional: true},
		}},
	}
	l, cmd := startInit(t, bin, cfg)
	ready := 0
	l.OnAgentReady(func(pid int) { ready = pid })
	results, err := l.Results(ctx(t))
	if err != nil || len(results) != 2 {
		t.Fatalf("results: %v %v", results, err)
	}
	for _, r := range results {
		if !r.Passed() || !r.Verify() || r.RunID != "it-init" {
			t.Errorf("%s: %s %s (%s)", r.Probe, r.Decision, r.Observed, r.Detail)
		}
	}
	if ready <= 0 || ready != l.AgentPID() {
		t.Errorf("agent-ready named pid %d, probes-done %d: want the same starter, reported before the probes were done", ready, l.AgentPID())
	}
	if err := l.Go(); err != nil {
		t.Fatal(err)
	}
	st, err := l.Started(ctx(t))
	if err != nil || st.PID <= 0 || st.Landlock.ABI != selftest.LandlockABI() || !st.Landlock.FS {
		t.Fatalf("started: %+v %v", st, err)
	}
	if strings.Join(st.Landlock.Skipped, ",") != "/nonexistent-optional" {
		t.Errorf("skipped: %v", st.Landlock.Skipped)
	}
	if code, err := l.Wait(ctx(t)); err != nil || code != 7 {
		t.Errorf("reported exit %d %v, want 7 (1 means Landlock let the agent read outside the plan)", code, err)
	}
	if code := exitCode(t, cmd); code != 7 {
		t.Errorf("init exited %d, want the agent's 7", code)
	}
}

func TestInitForwardsSignals(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	l, cmd := startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{},
		Agent: selftest.Command{Args: []string{"sleep", "300"}, Env: []string{"PATH=/usr/bin:/bin"}},
	})
	if _, err := l.Results(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Started(ctx(t)); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code, err := l.Wait(ctx(t)); err != nil || code != 128+15 {
		t.Errorf("reported %d %v, want 143", code, err)
	}
	if code := exitCode(t, cmd); code != 143 {
		t.Errorf("init exited %d, want 143", code)
	}
}

func TestInitAbortAndMissingAgent(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	l, cmd := startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{}, WaitGo: true,
		Agent: selftest.Command{Args: []string{"true"}},
	})
	if _, err := l.Results(ctx(t)); err != nil {
		t.Fatal(err)
	}
	l.Abort("probe failed")
	if code := exitCode(t, cmd); code != selftest.ExitInitFailed {
		t.Errorf("aborted init exited %d", code)
	}
	l, cmd = startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{},
		Agent: selftest.Command{Args: []string{"no-such-agent-xyz"}, Env: []string{"PATH=/usr/bin"}},
	})
	l.Results(ctx(t))
	var ie *selftest.InitError
	if _, err := l.Started(ctx(t)); !errors.As(err, &ie) || !strings.Contains(ie.Reason, "not found") {
		t.Errorf("missing agent: %v", err)
	}
	if code := exitCode(t, cmd); code != selftest.ExitNotFound {
		t.Errorf("missing agent: init exited %d", code)
	}
}

// TestMissingAgentWaitsForTheGo: the agent's starter prepares its start
// while the probes run, but a program it cannot find is reported only at
// the go, as before; until then the starter stays parked for the host's
// verification (alive, not a zombie).
func TestMissingAgentWaitsForTheGo(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	l, cmd := startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{}, WaitGo: true,
		Agent: selftest.Command{Args: []string{"no-such-agent-xyz"}, Env: []string{"PATH=/usr/bin"}},
	})
	if _, err := l.Results(ctx(t)); err != nil {
		t.Fatal(err)
	}
	pid := l.AgentPID()
	time.Sleep(100 * time.Millisecond) // time for a starter that failed its preparation to exit
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("the agent's starter %d is gone before the go: %v", pid, err)
	}
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) == 0 || f[0] == "Z" {
		t.Fatalf("the agent's starter %d exited before the go: %s", pid, stat)
	}
	if err := l.Go(); err != nil {
		t.Fatal(err)
	}
	var ie *selftest.InitError
	if _, err := l.Started(ctx(t)); !errors.As(err, &ie) || !strings.Contains(ie.Reason, "not found") {
		t.Errorf("missing agent: %v", err)
	}
	if code := exitCode(t, cmd); code != selftest.ExitNotFound {
		t.Errorf("missing agent: init exited %d", code)
	}
}

// TestProbeProcessFailureIsReported: init's child is told who to become
// and what to run in one go; when becoming the agent fails, each
// probe is reported UNKNOWN with the child's own reason, not the broken
// pipe of init's second write.
func TestProbeProcessFailureIsReported(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	l, cmd := startInit(t, bin, selftest.InitConfig{
		Version: selftest.ProtocolVersion, Probes: []string{"no-new-privs", "environment-is-clean"},
		Agent: selftest.Command{
			Args: []string{"true"}, Env: []string{"PATH=/usr/bin"},
			User: &selftest.Credential{UID: 65534, GID: 65534}, Seccomp: []byte{1, 2, 3},
		},
	})
	results, err := l.Results(ctx(t))
	if len(results) != 2 {
		t.Fatalf("%d results (%v), want 2", len(results), err)
	}
	for _, r := range results {
		if r.Decision != selftest.Unknown || !strings.Contains(r.Detail, "seccomp filter of 3 bytes") {
			t.Errorf("%s: %s %s (%s), want UNKNOWN with the child's reason", r.Probe, r.Decision, r.Observed, r.Detail)
		}
	}
	if code := exitCode(t, cmd); code != selftest.ExitInitFailed {
		t.Errorf("init exited %d, want %d (the agent's starter fails the same way)", code, selftest.ExitInitFailed)
	}
}

func TestProbeMode(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	for _, tc := range []struct {
		env  []string
		code int
	}{{[]string{"PATH=/bin"}, 0}, {[]string{"GITHUB_TOKEN=x"}, 1}} {
		cmd := exec.Command(bin, "--probe", "environment-is-clean", "--json")
		cmd.Env, cmd.Stdin = tc.env, strings.NewReader(fmt.Sprintf(`{"version":%d,"run_id":"pm"}`, selftest.ProtocolVersion))
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Run()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.Contains(out.String(), `"run_id":"pm"`) {
			t.Errorf("%v: exit %d, output %s", tc.env, cmd.ProcessState.ExitCode(), out.String())
		}
	}
	cmd := exec.Command(bin, "--probe", "nope")
	cmd.Stdin = strings.NewReader("")
	if cmd.Run(); cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("unknown probe: exit %d, want 2", cmd.ProcessState.ExitCode())
	}
}

// statusOf reads the fields of a /proc/PID/status text.
func statusOf(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return selftest.ParseStatus(b)
}

// Every child of init becomes the agent before it executes anything: the
// probes and the agent run as the given ids with every capability set
// empty, so they can neither prlimit, signal nor ptrace init, and init
// keeps CAP_KILL alone once the agent runs. Without the ids (init shares
// the agent's, here host root), the same probes report ALLOW.
func TestInitChildrenBecomeTheAgent(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	probes := []string{"capabilities-zero", "prlimit-pid1-denied", "kill-pid1-denied", "ptrace-pid1-denied"}
	for _, tc := range []struct {
		name string
		user *selftest.Credential
		want selftest.Decision
	}{
		{"agent ids", &selftest.Credential{UID: 65534, GID: 65534}, selftest.Deny},
		{"init's own ids", nil, selftest.Allow},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			out, err := os.MkdirTemp("", "agentbox-init-drop-") // reachable by uid 65534
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(out) })
			os.Chmod(out, 0o777)
			l, cmd := startInitFor(t, bin, func(initPID int) selftest.InitConfig {
				return selftest.InitConfig{
					Version: selftest.ProtocolVersion, RunID: "it-drop", WaitGo: true, Probes: probes, PtracePID: initPID,
					Agent: selftest.Command{
						Args: []string{"sh", "-c", "cat /proc/self/status > agent.status; cat /proc/$PPID/status > init.status"},
						Env:  []string{"PATH=/usr/bin:/bin"}, Dir: out, User: tc.user,
					},
				}
			})
			results, err := l.Results(ctx(t))
			if err != nil || len(results) != len(probes) {
				t.Fatalf("results: %v %v", results, err)
			}
			for _, r := range results {
				if r.Decision != tc.want {
					t.Errorf("%s: %s %s, want %s (%s)", r.Probe, r.Decision, r.Observed, tc.want, r.Detail)
				}
			}
			parked, err := selftest.HostPID("/proc", cmd.Process.Pid, l.AgentPID())
			if err != nil || parked != l.AgentPID() {
				t.Fatalf("the parked agent %d: host pid %d, %v", l.AgentPID(), parked, err)
			}
			if tc.user != nil {
				// Init dropped the rest while the child became the agent,
				// before the probes: not at the go.
				before := statusOf(t, filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status"))
				for _, k := range []string{"CapPrm", "CapEff", "CapBnd"} {
					if before[k] != "0000000000000020" {
						t.Errorf("init %s = %s after the probes, before the go, want CAP_KILL alone (0x20)", k, before[k])
					}
				}
			}
			if err := l.Go(); err != nil {
				t.Fatal(err)
			}
			if st, err := l.Started(ctx(t)); err != nil || st.PID != parked {
				t.Fatalf("started %+v %v, want the parked pid %d", st, err, parked)
			}
			if code := exitCode(t, cmd); code != 0 {
				t.Fatalf("init exited %d", code)
			}
			agent, init := statusOf(t, filepath.Join(out, "agent.status")), statusOf(t, filepath.Join(out, "init.status"))
			if tc.user == nil {
				return
			}
			if agent["Uid"] != "65534\t65534\t65534\t65534" || agent["Gid"] != "65534\t65534\t65534\t65534" || agent["Groups"] != "" {
				t.Errorf("agent ids: Uid %q Gid %q Groups %q", agent["Uid"], agent["Gid"], agent["Groups"])
			}
			for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if strings.Trim(agent[k], "0") != "" {
					t.Errorf("agent %s = %s, want empty", k, agent[k])
				}
			}
			for _, k := range []string{"CapPrm", "CapEff", "CapBnd"} {
				if init[k] != "0000000000000020" {
					t.Errorf("init %s = %s once the agent runs, want CAP_KILL alone (0x20)", k, init[k])
				}
			}
		})
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	state, _, ok := procStat(strconv.Itoa(pid))
	return ok && state != "Z" && state != "X"
}

// groupAlive lists the running processes of process group pgid.
func groupAlive(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		state, pg, ok := procStat(e.Name())
		if pid, err := strconv.Atoi(e.Name()); err == nil && ok && pg == pgid && state != "Z" && state != "X" {
			out = append(out, pid)
		}
	}
	return out
}

// procStat returns the state and process group of /proc/NAME/stat.
func procStat(name string) (string, int, bool) {
	b, err := os.ReadFile("/proc/" + name + "/stat")
	if err != nil {
		return "", 0, false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 3 {
		return "", 0, false
	}
	pg, err := strconv.Atoi(f[2])
	return f[0], pg, err == nil
}

// Init ends the sandbox when its channel to the launcher closes, whether
// the agent runs or is still waiting for the go: it kills what it started
// and exits at once (as PID 1 of a PID namespace, the exit alone does it).
func TestInitEndsTheSandboxWhenTheLauncherGoes(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	for _, waitGo := range []bool{false, true} {
		t.Run(fmt.Sprintf("wait-go-%v", waitGo), func(t *testing.T) {
			l, cmd := startInit(t, bin, selftest.InitConfig{
				Version: selftest.ProtocolVersion, Probes: []string{}, WaitGo: waitGo,
				Agent: selftest.Command{Args: []string{"sh", "-c", "sleep 300 & sleep 300"}, Env: []string{"PATH=/usr/bin:/bin"}, User: &selftest.Credential{UID: 65534, GID: 65534}},
			})
			if _, err := l.Results(ctx(t)); err != nil {
				t.Fatal(err)
			}
			agent := l.AgentPID()
			if !waitGo {
				st, err := l.Started(ctx(t))
				if err != nil {
					t.Fatal(err)
				}
				agent = st.PID
				time.Sleep(100 * time.Millisecond) // the agent's sleeps start
			}
			if !alive(agent) {
				t.Fatalf("agent %d is not running before the launcher goes", agent)
			}
			closed := time.Now()
			l.Close()
			if code := exitCode(t, cmd); code != selftest.ExitInitFailed {
				t.Errorf("init exited %d, want %d", code, selftest.ExitInitFailed)
			}
			for len(groupAlive(agent)) > 0 && time.Since(closed) < time.Second {
				time.Sleep(10 * time.Millisecond)
			}
			if left := groupAlive(agent); len(left) > 0 {
				t.Errorf("the agent's process group %d still runs %v 1s after the launcher's end closed", agent, left)
			}
		})
	}
}

// The probes run in the agent's process itself, not in a program it
// executes, so the process must be as an exec would have left it:
// dumpable again (the switch to the agent's uid made it not, and its /proc
// files were then root's), in the agent's directory, with nothing of
// init's but its three pipes to init. The test holds the gateway probe's
// request until it has looked at the process from the host; the process
// that ran the probes is then the one the agent's exec starts.
func TestProbesRunAsAnExecWouldLeaveThem(t *testing.T) {
	testutil.RequireRoot(t)
	bin := buildInit(t)
	dir, err := os.MkdirTemp("", "agentbox-init-probe-") // reachable by uid 65534
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var initPID int
	l, cmd := startInitFor(t, bin, func(pid int) selftest.InitConfig {
		initPID = pid
		return selftest.InitConfig{
			Version: selftest.ProtocolVersion, RunID: "it-inplace", WaitGo: true, Probes: []string{"gateway-reachable"},
			Targets: selftest.Targets{Gateway: ln.Addr().String(), GatewayHealth: "/health"},
			Agent:   selftest.Command{Args: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, User: &selftest.Credential{UID: 65534, GID: 65534}},
		}
	})
	type seen struct {
		pid      int
		problems []string
	}
	checked := make(chan seen, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			checked <- seen{problems: []string{err.Error()}}
			return
		}
		defer c.Close()
		pid, problems := probeProcessProblems(initPID, dir)
		checked <- seen{pid, problems}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	}()
	results, err := l.Results(ctx(t))
	if err != nil || len(results) != 1 {
		t.Fatalf("results: %v %v", results, err)
	}
	var prober int
	select {
	case c := <-checked:
		for _, p := range c.problems {
			t.Error(p)
		}
		prober = c.pid
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway probe never connected")
	}
	if r := results[0]; r.Decision != selftest.Allow {
		t.Errorf("gateway-reachable: %s %s (%s)", r.Decision, r.Observed, r.Detail)
	}
	if err := l.Go(); err != nil {
		t.Fatal(err)
	}
	if st, err := l.Started(ctx(t)); err != nil || st.PID != prober {
		t.Errorf("started %+v %v, want the process that ran the probes, %d", st, err, prober)
	}
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("init exited %d", code)
	}
}

// probeProcessProblems finds init's child in dir (the agent's process,
// which runs the probes there) and returns its pid and says what about it differs from a
// freshly executed program running as uid 65534 with its three pipes to
// init: another owner of its /proc files, or an fd that is neither stdio,
// those pipes, nor what the probe and the Go runtime opened themselves.
func probeProcessProblems(init int, dir string) (int, []string) {
	var probe int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", init))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", init, task.Name()))
		for _, f := range strings.Fields(string(b)) {
			if cwd, _ := os.Readlink("/proc/" + f + "/cwd"); cwd == dir {
				probe, _ = strconv.Atoi(f)
			}
		}
	}
	if probe == 0 {
		return 0, []string{"no child of init runs in " + dir}
	}
	var problems []string
	fi, err := os.Stat(fmt.Sprintf("/proc/%d/status", probe))
	if err != nil {
		return probe, []string{err.Error()}
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 65534 {
		problems = append(problems, fmt.Sprintf("/proc/%d is uid %d's, not the probe's uid 65534: the probe process is not dumpable", probe, uid))
	}
	// The sockets and pipes init holds that the test binary did not give
	// it (its channel, the bridge's listeners, its ends of the child's
	// pipes): their links name them by inode.
	inits := map[string]bool{}
	initFDs, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", init))
	for _, e := range initFDs {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", init, e.Name()))
		if mine, _ := os.Readlink("/proc/self/fd/" + e.Name()); link != mine && (strings.HasPrefix(link, "socket:") || strings.HasPrefix(link, "pipe:")) {
			inits[link] = true
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", probe))
	for _, e := range fds {
		fd, _ := strconv.Atoi(e.Name())
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", probe, fd))
		switch {
		case fd <= 2, fd <= 5 && strings.HasPrefix(link, "pipe:"): // stdio, and its request, status and results pipes
		case inits[link]:
			problems = append(problems, fmt.Sprintf("the agent's process holds fd %d, %s, which is init's", fd, link))
		case strings.HasPrefix(link, "socket:"), strings.HasPrefix(link, "anon_inode:"): // the probe's own, the Go runtime's
		case strings.HasPrefix(link, "/sys/fs/cgroup/"): // the Go runtime's CPU quota, read for GOMAXPROCS
		case link == mustReadlink(fmt.Sprintf("/proc/self/fd/%d", fd)): // the test binary's, through init without close-on-exec
		default:
			problems = append(problems, fmt.Sprintf("the agent's process holds fd %d, %s, during the probes", fd, link))
		}
	}
	return probe, problems
}

func mustReadlink(p string) string {
	l, _ := os.Readlink(p)
	return l
}
