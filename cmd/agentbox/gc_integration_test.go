//go:build integration && linux

package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/engine"
	cdengine "github.com/agentbox/agentbox/engine/containerd"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
)

// waitForAgent polls until the agent has created ready (a file in its
// workspace), then returns the run directory and its meta.json.
func waitForAgent(t *testing.T, runRoot, ready string) (string, engine.Meta) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(ready); err == nil {
			dirs, _ := filepath.Glob(filepath.Join(runRoot, "runs", "*", "meta.json"))
			for _, m := range dirs {
				var meta engine.Meta
				if data, err := os.ReadFile(m); err == nil && json.Unmarshal(data, &meta) == nil && meta.PidNS != 0 {
					return filepath.Dir(m), meta
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the agent did not start within 20s")
	return "", engine.Meta{}
}

// A launcher killed with SIGKILL mid-run takes its sandbox's processes
// with it (TestSandboxDiesWithItsLauncher) but leaves the rest; the next
// `agentbox gc` finds it and leaves no process, mount, runtime state,
// cgroup, id lease or run directory behind, and records what it found.
func TestKilledLauncherIsCleanedByGC(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	runRoot := envValue(env, "AGENTBOX_RUN_ROOT")
	cmd := exec.Command(agentboxBin, "run", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000 & touch ready; sleep 1000")
	cmd.Env, cmd.Dir = env, ws
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runDir, meta := waitForAgent(t, runRoot, filepath.Join(ws, "ready"))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(runtimeState(meta)); err != nil {
		t.Fatalf("no runtime state left; this test then proves nothing about gc: %v", err)
	}

	if onContainerd() && shimPid(testContainerdAddress(), meta.RunID) <= 0 {
		t.Fatalf("no shim of %s runs; this test then proves nothing about gc on containerd", meta.RunID)
	}
	r := runIn(t, env, ws, "gc", "--json")
	if r.code != 0 {
		t.Fatalf("gc exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rec ledger.Record
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &rec); err != nil {
		t.Fatalf("gc output %q: %v", r.stdout, err)
	}
	if rec.RunID != meta.RunID || rec.Teardown == nil || !rec.Teardown.Clean() {
		t.Errorf("gc record %+v, want a clean teardown of %s", rec, meta.RunID)
	}
	assertNothingLeft(t, runDir, meta)
	if again := runIn(t, env, ws, "gc", "--json"); again.code != 0 || again.stdout != "" {
		t.Errorf("second gc found more: %d %q", again.code, again.stdout)
	}
}

// runtimeState is where the runtime keeps the state of run meta: ROOT/ID
// from the CLI; ROOT/NAMESPACE/ID from containerd's runc shim, which adds
// its namespace (a difference the suite on containerd asserts here).
func runtimeState(meta engine.Meta) string {
	if onContainerd() {
		return filepath.Join(meta.Runtime.Root, cdengine.Namespace, meta.RunID)
	}
	if meta.Runtime.Name == "runsc" {
		return engine.RunscStateFiles(meta.Runtime.Root, meta.RunID)[0] // runsc keeps files, no directory
	}
	return filepath.Join(meta.Runtime.Root, meta.RunID)
}

// assertNothingLeft checks from the host that run meta left nothing, and
// on containerd (AGENTBOX_TEST_ENGINE) also that the daemon holds no
// task, container or shim of it.
func assertNothingLeft(t *testing.T, runDir string, meta engine.Meta) {
	t.Helper()
	if onContainerd() {
		_, c := testContainerd(t)
		assertDaemonForgot(t, c, testContainerdAddress(), meta.RunID)
	}
	if pids := engine.SandboxPids(meta.PidNS, meta.InitPid); len(pids) > 0 {
		t.Errorf("processes survive: %v", pids)
	}
	if _, err := os.Stat(runDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run directory %s still exists", runDir)
	}
	if _, err := os.Stat(runtimeState(meta)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runtime state of %s left in %s", meta.RunID, meta.Runtime.Root)
	}
	runRoot := filepath.Dir(filepath.Dir(runDir))
	if _, err := os.Stat(filepath.Join(runRoot, "userns", meta.RunID+".lease")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("id lease of %s not released", meta.RunID)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), runDir) {
		t.Errorf("mounts under %s remain", runDir)
	}
	if meta.Cgroup != "" {
		if dirs, _ := filepath.Glob("/sys/fs/cgroup/*" + meta.Cgroup); len(dirs) > 0 {
			t.Errorf("cgroups remain: %v", dirs)
		}
	}
}

// SIGTERM to the launcher reaches the agent, and the agent's way of
// exiting is passed through; teardown follows.
func TestSigtermReachesTheAgent(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	runRoot := envValue(env, "AGENTBOX_RUN_ROOT")
	cmd := exec.Command(agentboxBin, "run", "--", "sh", "-c", "trap 'echo got-term; exit 9' TERM; sleep 1000 & touch ready; wait")
	cmd.Env, cmd.Dir = env, ws
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runDir, meta := waitForAgent(t, runRoot, filepath.Join(ws, "ready"))
	defer func() { t.Logf("launcher stderr:\n%s", errb.String()) }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 9 || !strings.Contains(out.String(), "got-term") {
		t.Errorf("launcher ended with %v and output %q; want the agent's trap to run and exit 9", err, out.String())
	}
	assertNothingLeft(t, runDir, meta)
}

// A launcher killed during a run in a root-owned (granted) workspace, and
// the workspace deleted before anyone ran gc: the next gc cleans the run
// completely, records that there was nothing to revoke, and the gc after
// it finds nothing. It used to report the run as cleaned, keep it, and
// report it again on every later invocation.
func TestGCOfRunWhoseWorkspaceWasRemovedAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	ws := workspaceOwnedBy(t, 0, 0)
	env := isolatedEnv(t)
	runRoot := envValue(env, "AGENTBOX_RUN_ROOT")
	cmd := exec.Command(agentboxBin, "run", "--", "sh", "-c", "touch ready; sleep 1000")
	cmd.Env, cmd.Dir = env, ws
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runDir, meta := waitForAgent(t, runRoot, filepath.Join(ws, "ready"))
	method := engine.GrantACL
	if onRunsc() {
		method = engine.GrantChown // gVisor's Sentry evaluates no ACL: the workspace is lent (chown)
	}
	if meta.Grant == nil || meta.Grant.Method != method || meta.Grant.MethodReason == "" {
		t.Errorf("meta.json grant %+v, want the %s method with its reason", meta.Grant, method)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}

	r := runIn(t, env, "/", "gc", "--json")
	if r.code != 0 {
		t.Fatalf("gc exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rec ledger.Record
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &rec); err != nil {
		t.Fatalf("gc output %q: %v", r.stdout, err)
	}
	if rec.RunID != meta.RunID || rec.Teardown == nil || !rec.Teardown.Clean() {
		t.Errorf("gc record %+v, want a clean teardown of %s", rec, meta.RunID)
	}
	if g := rec.Teardown.WorkspaceGrant; g == nil || !strings.Contains(g.Revoke, "nothing to revoke") {
		t.Errorf("gc record's workspace grant %+v, want 'nothing to revoke'", g)
	}
	assertNothingLeft(t, runDir, meta)
	if again := runIn(t, env, "/", "gc", "--json"); again.code != 0 || again.stdout != "" {
		t.Errorf("second gc found more: %d %q", again.code, again.stdout)
	}
}
