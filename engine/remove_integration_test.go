//go:build integration && linux

package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// A mount left under a run directory (a bind of the workspace, say) is not
// entered: nothing on it is deleted, and the error names it, so teardown
// reports residue instead of emptying the user's tree.
func TestRemoveTreeLeavesMountsAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	src := t.TempDir()
	keep := filepath.Join(src, "keep")
	writeFile(t, keep, 0o644)
	run := filepath.Join(t.TempDir(), "run")
	mnt := filepath.Join(run, "bundle", "rootfs", "workspace")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(run, "config.json"), 0o600)
	if err := unix.Mount(src, mnt, "", unix.MS_BIND, ""); err != nil {
		testutil.Skip(t, "bind mount: "+err.Error())
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	err := RemoveTree(run)
	if err == nil || !strings.Contains(err.Error(), "workspace: a mount point") {
		t.Errorf("RemoveTree: %v; want an error naming the mount point", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file on the mount was deleted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run, "config.json")); err == nil {
		t.Error("the rest of the run directory was not removed")
	}
}
