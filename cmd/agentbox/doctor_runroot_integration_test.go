//go:build integration && linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/internal/testutil"
)

// doctor's run-root check names the filesystem of the run root the CLI
// would use, as stat(1) names it; and the tmpfs its fix mounts is one that
// agentbox accepts and launches from with every runtime here, mounted
// noexec or not.
func TestDoctorRunRootAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	uid, gid := testUser(t)
	env := isolatedEnv(t)
	ws := workspaceOwnedBy(t, uid, gid)
	runRoot := envValue(env, "AGENTBOX_RUN_ROOT")

	// The isolated run root, wherever the test's temporary directory is.
	fsType := strings.TrimSpace(string(mustOutput(t, "stat", "-f", "-c", "%T", runRoot)))
	r := doctorRunRoot(t, env, ws)
	onTmpfs := fsType == "tmpfs" || fsType == "ramfs"
	if want := map[bool]doctor.Status{true: doctor.Pass, false: doctor.Warn}[onTmpfs]; r.Status != want || !strings.Contains(r.Detail, runRoot) {
		t.Fatalf("run root %s on %s (stat -f): doctor says %s: %s; want %s naming it", runRoot, fsType, r.Status, r.Detail, want)
	}
	opts := "mode=0711,nosuid,nodev"
	if !onTmpfs {
		m := regexp.MustCompile(`mount -t tmpfs -o (\S+) tmpfs ` + regexp.QuoteMeta(runRoot)).FindStringSubmatch(r.Fix)
		if m == nil {
			t.Fatalf("fix %q has no tmpfs mount of %s", r.Fix, runRoot)
		}
		opts = m[1]
	}

	// The fix's mount, on a run root of its own.
	dir, err := os.MkdirTemp("", "abt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	mustOutput(t, "mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir)
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	tenv := append(slices.Clone(env), "AGENTBOX_RUN_ROOT="+dir) // exec takes the last
	if r := doctorRunRoot(t, tenv, ws); r.Status != doctor.Pass {
		t.Fatalf("on the fix's tmpfs (%s): %s: %s", opts, r.Status, r.Detail)
	}
	launchFrom := func(what string) {
		for _, rt := range []string{"runc", "crun"} {
			if _, err := exec.LookPath(rt); err != nil {
				continue
			}
			if res := runIn(t, tenv, ws, "run", "--runtime", rt, "--", "true"); res.code != 0 {
				t.Errorf("agentbox run --runtime %s with the run root on %s: exit %d\n%s", rt, what, res.code, res.stderr)
			}
		}
	}
	launchFrom("the fix's tmpfs")

	// The same tmpfs mounted noexec, as a systemd host's /run often is: a
	// PASS, and every runtime and engine launches from it (runc once failed
	// the gateway socket's read-only remount there with EPERM, and the
	// containerd shim to execute its runtime, then a script in the bundle).
	mustOutput(t, "mount", "-o", "remount,noexec", dir)
	if r := doctorRunRoot(t, tenv, ws); r.Status != doctor.Pass {
		t.Errorf("on a noexec tmpfs: %s: %s (fix %q); want PASS", r.Status, r.Detail, r.Fix)
	}
	launchFrom("a noexec tmpfs")
}

// doctorRunRoot runs `agentbox doctor --json` and returns its run-root
// check.
func doctorRunRoot(t *testing.T, env []string, ws string) doctor.Result {
	t.Helper()
	res := runIn(t, env, ws, "doctor", "--json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("doctor --json (exit %d): %v\n%s", res.code, err, res.stderr)
	}
	for _, c := range rep.Checks {
		if c.ID == "run-root" {
			return c
		}
	}
	t.Fatalf("doctor --json reports no run-root check")
	return doctor.Result{}
}

func mustOutput(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}
