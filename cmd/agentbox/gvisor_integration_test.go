//go:build integration && linux

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/internal/testutil"
)

// builtRunsc is the runsc scripts/runsc-build.sh builds (make setup), at
// the gVisor version tools/runsc/go.mod pins; missing, the test fails in
// strict mode and is skipped otherwise.
func builtRunsc(t *testing.T) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	mod, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "tools", "runsc", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var ver string
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "require" && f[1] == "gvisor.dev/gvisor" {
			ver = f[2]
		}
	}
	if ver == "" {
		t.Fatal("tools/runsc/go.mod requires no gvisor.dev/gvisor")
	}
	root := os.Getenv("AGENTBOX_RUNSC_CACHE")
	if root == "" {
		root = "/var/cache/agentbox-test"
	}
	p := filepath.Join(root, "runsc-"+ver, "runsc")
	if _, err := os.Stat(p); err != nil {
		testutil.Skip(t, p+" missing: scripts/runsc-build.sh (make setup) builds it")
	}
	return p
}

// testRuntimePath is the runtime AGENTBOX_TEST_RUNTIME names: for runsc
// the one scripts/runsc-build.sh builds (Debian 12's, on PATH, is refused:
// TestRunscRefusedWithItsReasonAsRoot), else the name, found on PATH.
func testRuntimePath(t *testing.T, rt string) string {
	t.Helper()
	if rt == "runsc" {
		return builtRunsc(t)
	}
	testutil.RequireBinary(t, rt, rt)
	return rt
}

// onRunsc reports whether the suite runs under gVisor
// (AGENTBOX_TEST_RUNTIME=runsc): the tests that meet one of gVisor's
// differences assert gVisor's behaviour there, with the reason.
func onRunsc() bool { return os.Getenv(testRuntimeEnv) == "runsc" }

// agentTTYName is the start of what `tty` says in the sandbox with a
// terminal: a pty of the sandbox's own devpts, and under gVisor "not a
// tty": runsc makes the pty on the host and imports its end into the
// Sentry as a host file (/proc/self/fd/0 reads "host:[1]"), which has no
// name, so ttyname(3) fails though isatty(3) holds (google/gvisor#13535;
// TestGvisorTerminalAsRoot asserts the rest).
func agentTTYName() string {
	if onRunsc() {
		return "not a tty"
	}
	return "/dev/pts/"
}

// probeLines runs `agentbox selftest --json` and returns each result by
// probe, and the verdict line.
func probeLines(t *testing.T, env []string, ws string, args ...string) (map[string]map[string]any, map[string]any, result) {
	t.Helper()
	r := runIn(t, env, ws, append([]string{"selftest", "--json"}, args...)...)
	by := map[string]map[string]any{}
	var verdict map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("selftest line %q: %v", sc.Text(), err)
		}
		if _, ok := line["verdict"]; ok {
			verdict = line
			continue
		}
		if p, ok := line["probe"].(string); ok {
			by[p] = line
		}
	}
	if verdict == nil {
		t.Fatalf("selftest printed no verdict (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return by, verdict, r
}

// The self-test runs in full under gVisor and passes, and every probe whose
// answer differs from runc's says how gVisor decided it: the Sentry
// answers uname and the Landlock query (no Landlock exists for the agent,
// a residual), /proc/cmdline and two devices are the Sentry's own, the uid
// map and init's separation are decided by the checks that see them, the
// host checks read the Sentry process, whose host seccomp filter and
// mapped user namespace are the boundary; no host socket is reachable and
// the gateway is, through init's dialer.
func TestGvisorSelfTestAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	runsc := builtRunsc(t)
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	by, verdict, r := probeLines(t, env, ws, "--runtime", runsc)
	if verdict["verdict"] != "PASS" || verdict["failed"] != float64(0) || r.code != 0 {
		t.Fatalf("verdict %v (exit %d), want PASS\nstdout:\n%s\nstderr:\n%s", verdict, r.code, r.stdout, r.stderr)
	}
	onRunc, _, _ := probeLines(t, env, ws, "--runtime", "runc")
	for name := range onRunc {
		if _, ok := by[name]; !ok {
			t.Errorf("probe %s ran on runc, not under gVisor: nothing may be skipped", name)
		}
	}
	if got := onRunc["kernel-as-planned"]["observed"]; got != "host-kernel" {
		t.Errorf("kernel-as-planned on runc observed %v, want host-kernel", got)
	}
	for _, tc := range []struct{ probe, decision, observed string }{
		{"kernel-as-planned", "DENY", "sentry"},
		{"uid-map-non-identity", "DENY", "gvisor:host-uid-map=mapped"},
		{"kernel-cmdline-hidden", "DENY", "sentry-own"},
		{"device-nodes-minimal", "DENY", "minimal"},
		{"host-uid-map", "DENY", "mapped"},
		{"host-capabilities", "DENY", "sentry-userns:"},
		{"host-no-new-privs", "DENY", "set"},
		{"host-seccomp", "DENY", "filter"},
		{"host-namespaces", "DENY", "+sentry-host-cgroup"},
		{"host-mounts", "DENY", "clean"},
		{"host-init-uid-separate", "DENY", "gvisor:ptrace-pid1-denied=EPERM,prlimit-pid1-denied=EPERM,kill-pid1-denied=EPERM"},
		{"seccomp-filter", "DENY", ""},
		{"unshare-user-denied", "DENY", ""},
		{"workspace-socket-unreachable", "DENY", ""},
		{"host-abstract-socket-unreachable", "DENY", ""},
		{"gateway-reachable", "ALLOW", "health-ok"},
	} {
		got := by[tc.probe]
		obs, _ := got["observed"].(string)
		if got["decision"] != tc.decision || !strings.Contains(obs, tc.observed) {
			t.Errorf("%s: %v %q, want %s with %q", tc.probe, got["decision"], obs, tc.decision, tc.observed)
		}
	}
	show := runIn(t, env, ws, "show", verdict["run_id"].(string))
	for _, want := range []string{"gvisor-landlock-absent: Landlock does not exist in gVisor's Sentry", "gvisor-sentry-cgroup-namespace:"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("the run's record lacks the residual %q:\n%s", want, show.stdout)
		}
	}
	if strings.Contains(show.stdout, "workspace-socket-after-launch") {
		t.Errorf("under gVisor no host socket is reachable, yet the record has the socket residual:\n%s", show.stdout)
	}
}

// A command runs under gVisor as the agent: no capabilities, no_new_privs,
// the Sentry's seccomp filter, gVisor's kernel, a read-only root, a
// writable workspace, the gateway on loopback, and its exit code.
func TestGvisorRunAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	runsc := builtRunsc(t)
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	script := `id -u; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; uname -r
touch /etc/agentbox-x 2>/dev/null && echo root-writable || echo root-read-only
echo hi > ./from-gvisor && echo ws-writable
exit 7`
	r := runIn(t, env, ws, "run", "--runtime", runsc, "--", "sh", "-c", script)
	if r.code != 7 {
		t.Fatalf("exit code %d, want the command's 7\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2", "gvisor", "root-read-only", "ws-writable"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if first, _, _ := strings.Cut(r.stdout, "\n"); first == "0" {
		t.Errorf("the command ran as root inside: %q", first)
	}
	b, err := os.ReadFile(filepath.Join(ws, "from-gvisor"))
	if err != nil || string(b) != "hi\n" {
		t.Errorf("the workspace file on the host: %q, %v", b, err)
	}
}

// A root-owned workspace under gVisor: the Sentry evaluates no POSIX ACL,
// so the workspace is lent to the agent's unprivileged host uid (chown)
// for the run instead of granted with ACLs. The agent, not root inside,
// writes an existing file and makes new ones; afterwards every inode is
// root's again with the mode it had, and the record names the method.
func TestGvisorRootOwnedWorkspaceAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	runsc := builtRunsc(t)
	ws := workspaceOwnedBy(t, 0, 0)
	if err := os.WriteFile(filepath.Join(ws, "existing"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := isolatedEnv(t)
	r := runIn(t, env, ws, "run", "--runtime", runsc, "--", "sh", "-c", "id -u; echo more >> existing && echo new > new && mkdir -p d/e && echo f > d/e/f && chmod 0777 . && echo ws-writable")
	if r.code != 0 || !strings.Contains(r.stdout, "ws-writable") {
		t.Fatalf("exit %d, want the agent to write the workspace\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if first, _, _ := strings.Cut(r.stdout, "\n"); first == "0" {
		t.Errorf("the agent ran as root inside: %q", first)
	}
	if strings.Contains(r.stderr, "gvisor-workspace-grant") {
		t.Errorf("a residual says the workspace is not writable, yet it is:\n%s", r.stderr)
	}
	_ = filepath.Walk(ws, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 {
			t.Errorf("%s owned by %d:%d after the run, want root's", p, st.Uid, st.Gid)
		}
		return nil
	})
	for p, want := range map[string]os.FileMode{ws: 0o755, filepath.Join(ws, "existing"): 0o644} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "existing")); err != nil || string(b) != "x\nmore\n" {
		t.Errorf("existing file on the host: %q, %v", b, err)
	}
	g := lastRecord(t, env).Teardown.WorkspaceGrant
	if g == nil || g.Method != engine.GrantChown || !strings.Contains(g.Reason, "evaluates no POSIX ACL") || !strings.Contains(g.Grant, "lent to the agent") {
		t.Errorf("the record's workspace grant %+v, want the chown method, its reason and what was lent", g)
	}
}

// The terminal under gVisor: the agent gets runsc's pty, made on the host
// for the run and imported into the Sentry as a host file. isatty(3)
// holds on stdin and stdout and the user's window size reaches it, but the
// file has no name: /proc/self/fd/0 reads "host:[N]" and `tty` says "not
// a tty" (google/gvisor#13535), where runc gives a /dev/pts/N of the
// sandbox. It is not the user's terminal: a title the agent sets is
// stripped by agentbox's filter, which sees only what comes out of the
// pty's master.
func TestGvisorTerminalAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	runsc := builtRunsc(t)
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	inner := "stty cols 123 rows 45; " + agentboxBin + " run --runtime " + runsc +
		` -- sh -c 'tty; echo fd0=$(readlink /proc/self/fd/0); stty size; test -t 0 && test -t 1 && echo both-terminals; printf "\033]2;agentbox-title-leak\007"; exit 5'; echo exit=$?`
	out, err := scriptCommand(t, isolatedEnv(t), ws, inner).CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	checkStartsWithAgent(t, string(out), "not a tty")
	for _, want := range []string{"fd0=host:[", "45 123", "both-terminals", "exit=5"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(string(out), "agentbox-title-leak") {
		t.Errorf("the agent's title reached the user's terminal: its terminal is not behind agentbox's filter\n%q", out)
	}
}

// killGvisorAgent kills the agent of run meta from outside under gVisor,
// where it is a task of the Sentry and no host process: through runsc, by
// its pid inside, which the agent wrote to ws/agent.pid.
func killGvisorAgent(t *testing.T, meta engine.Meta, ws string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, "agent.pid"))
	pid := strings.TrimSpace(string(b))
	if err != nil || pid == "" {
		t.Fatalf("the agent's pid inside: %q, %v", b, err)
	}
	if out, err := exec.Command(meta.Runtime.Path, "--root", meta.Runtime.Root, "kill", "--pid", pid, meta.RunID, "KILL").CombinedOutput(); err != nil {
		t.Fatalf("runsc kill --pid %s: %v\n%s", pid, err, out)
	}
}

// Doctor reports a runsc on PATH that agentbox accepts: PASS, with its
// version and path, and both launch modes holding.
func TestGvisorDoctorReportsRunscAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	runsc := builtRunsc(t)
	env := isolatedEnv(t)
	env = append(withoutKey(env, "PATH"), "PATH="+filepath.Dir(runsc)+":"+envValue(env, "PATH"))
	r := runIn(t, env, "/", "doctor", "--json")
	var doc struct {
		Checks []struct{ ID, Status, Detail string }
		Modes  []struct {
			Runtime, Mode string
			Holds         bool
		} `json:"runtime_modes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("doctor --json (exit %d): %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	ver := strings.TrimPrefix(filepath.Base(filepath.Dir(runsc)), "runsc-")
	found := false
	for _, c := range doc.Checks {
		if c.ID != "runtime-runsc" {
			continue
		}
		found = true
		if c.Status != "PASS" || !strings.Contains(c.Detail, "runsc "+ver+" at "+runsc) || !strings.Contains(c.Detail, "accepts it") {
			t.Errorf("runtime-runsc: %s %q, want PASS naming version %s, the path and that run accepts it", c.Status, c.Detail, ver)
		}
	}
	if !found {
		t.Errorf("doctor has no runtime-runsc check:\n%s", r.stdout)
	}
	modes := 0
	for _, m := range doc.Modes {
		if m.Runtime == "runsc" {
			modes++
			if !m.Holds {
				t.Errorf("runsc %s: doctor says it does not launch", m.Mode)
			}
		}
	}
	if modes == 0 {
		t.Errorf("doctor lists no runsc launch mode:\n%s", r.stdout)
	}
}

// The launcher's boundary suite (run_integration_test.go) under gVisor:
// no capabilities, no_new_privs, seccomp, a read-only root, no canary,
// mount and unshare refused, only lo, the workspace writable with the
// owner's ids. Its differences are asserted in testBoundary.
func TestGvisorBoundaryAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	testBoundary(t, builtRunsc(t))
}
