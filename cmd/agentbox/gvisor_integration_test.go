//go:build integration && linux

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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
