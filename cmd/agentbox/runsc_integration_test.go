//go:build integration && linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/internal/testutil"
)

// TestRunscRefusedWithItsReasonAsRoot runs `agentbox run --runtime runsc`
// on the host's runsc. Debian 12's (0.0~20221219) cannot pass agentbox-init
// its channel (no --pass-fd), so agentbox refuses it before anything is
// made: exit 4, the reason and the fix on stderr, no sandbox created, no
// run directory left. A runsc on PATH that can pass files fails this test:
// it tests Debian's refusal; gvisor_integration_test.go runs a runsc that
// agentbox accepts.
func TestRunscRefusedWithItsReasonAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	runsc := testutil.RequireBinary(t, "runsc", "runsc")
	help, _ := exec.Command(runsc, "help", "run").CombinedOutput()
	if engine.RunscPassesFiles(string(help)) {
		t.Fatalf("%s lists --%s: agentbox accepts it, so this test of Debian 12's refusal cannot run here (TestGvisorSelfTestAsRoot covers an accepted runsc)", runsc, engine.RunscFdFlag)
	}
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	r := runIn(t, env, ws, "run", "--runtime", "runsc", "--", "true")
	if r.code != 4 {
		t.Fatalf("exit code %d, want 4 (the host cannot provide the boundary)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"runsc", "no --pass-fd", "fd 3", "--runtime runc", "scripts/runsc-build.sh"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	state := envValue(env, "AGENTBOX_RUN_ROOT")
	if state == "" {
		t.Fatal("isolatedEnv sets no AGENTBOX_RUN_ROOT")
	}
	for _, dir := range []string{filepath.Join(state, "runs"), filepath.Join(state, "runtime", "runsc")} {
		entries, err := os.ReadDir(dir)
		if err == nil && len(entries) > 0 {
			t.Errorf("%s holds %d entries after a refused launch", dir, len(entries))
		}
	}
}
