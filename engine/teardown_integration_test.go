//go:build integration && linux

package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
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

// The kernel gives a freed pid namespace's inode number to the next pid
// namespace made on the host, at once (the lowest free number): a gc long
// after a sandbox died finds its meta.json's number on someone else's
// namespace. Teardown then kills nothing and counts nothing there: the
// sandbox's init is gone, so its namespace is, and the processes that now
// show that number are not the sandbox's.
func TestTeardownLeavesAReusedPidNamespaceAloneAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	inNewPidNS := func(args ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
		if err := cmd.Start(); err != nil {
			testutil.Skip(t, "a new pid namespace: "+err.Error())
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	sandbox := inNewPidNS("sh", "-c", "sleep 100 & wait")
	ns, err := NamespaceInode(sandbox.Process.Pid, "pid")
	if err != nil {
		t.Fatal(err)
	}
	init := sandbox.Process.Pid
	for len(SandboxPids(ns, init)) < 2 { // sh and its sleep
		time.Sleep(time.Millisecond)
		if err := unix.Kill(init, 0); err != nil {
			t.Fatalf("the sandbox's init died: %v", err)
		}
	}
	_ = sandbox.Process.Kill()
	_ = sandbox.Wait()

	// Namespaces are made, and held, until one gets the freed number:
	// every lower free number is taken first.
	var other *exec.Cmd
	for i := 0; i < 500 && other == nil; i++ {
		c := inNewPidNS("sleep", "100")
		if got, err := NamespaceInode(c.Process.Pid, "pid"); err == nil && got == ns {
			other = c
		}
	}
	if other == nil {
		testutil.Skip(t, "pid namespace number reuse: none of 500 new namespaces got the freed one (another process on the host holds it)")
	}
	if got := PidsInNamespace(ns); !slices.Equal(got, []int{other.Process.Pid}) {
		t.Fatalf("PidsInNamespace(%d) = %v, want the other namespace's %d: the test's premise", ns, got, other.Process.Pid)
	}
	if got := SandboxPids(ns, init); got != nil {
		t.Errorf("SandboxPids of the dead sandbox = %v, want none", got)
	}
	if got := SandboxPids(ns, other.Process.Pid); !slices.Equal(got, []int{other.Process.Pid}) {
		t.Errorf("SandboxPids with the namespace's live init = %v, want %d", got, other.Process.Pid)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := Runtime{}.Teardown(context.Background(), Target{ID: "reused", RunDir: dir, PidNS: ns, InitPid: init})
	if rec.Decision != ledger.DecisionClean || len(rec.SurvivingPIDs) > 0 {
		t.Errorf("teardown %+v, want clean with no survivors", rec)
	}
	if err := unix.Kill(other.Process.Pid, 0); err != nil || zombie(other.Process.Pid) {
		t.Errorf("teardown of the dead sandbox killed pid %d of the namespace that reused its number", other.Process.Pid)
	}
}
