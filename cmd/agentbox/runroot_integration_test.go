//go:build integration && linux

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// As root the run root is /run/agentbox, a system directory: the files the
// launcher binds from it (agentbox-init, the gateway socket, the covers over
// the workspace's sockets) must not make the self-audit refuse the launch.
// The other tests use a run root under /tmp, which hid exactly that.
func TestRunWithTheDefaultRunRootAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	run, err := os.MkdirTemp("/run", "agentbox-it-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	env := append(withoutKey(isolatedEnv(t), "AGENTBOX_RUN_ROOT"), "AGENTBOX_RUN_ROOT="+run)
	r := runIn(t, env, ws, "run", "--", "sh", "-c", "echo sandbox-ran")
	if r.code != exitOK || !strings.Contains(r.stdout, "sandbox-ran") {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
