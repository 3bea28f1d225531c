//go:build integration && linux

package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// A mount left under a run directory whose path holds a space, a tab and
// a newline is still found in the kernel's escaped mountinfo, and named as
// it is on disk.
func TestMountsUnderDecodesTheKernelsEscapesAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	run := filepath.Join(t.TempDir(), "run dir")
	mnt := filepath.Join(run, "new\nline\ttab", "rootfs")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		testutil.Skip(t, "tmpfs mount: "+err.Error())
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	if got := mountsUnder(run); !slices.Equal(got, []string{mnt}) {
		t.Errorf("mountsUnder(%q) = %q, want %q", run, got, mnt)
	}
	if got := mountsUnder(run + "x"); got != nil {
		t.Errorf("mountsUnder of a sibling = %q", got)
	}
}
