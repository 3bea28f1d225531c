package engine

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// BelowHybridUnified calls fn from a mount namespace of its own in which
// the host's cgroup2 mount at HybridUnified is detached: there the path
// names the directory that mount covers, on the host's /sys/fs/cgroup
// tmpfs, which nothing on the host sees. Agentbox's builds before the
// hidden mount was covered (nsexec's hide) hid it from crun by detaching
// it, and crun then made its "0::" cgroup in that directory, one
// directory and a cgroup.procs file per launch, and never removed them;
// `agentbox gc` removes them through this. It refuses to call fn unless
// HybridUnified is on a tmpfs once detached, and runs on a thread that Go
// retires afterwards, so nothing else runs in that namespace.
func BelowHybridUnified(fn func(dir string) error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		done <- belowHybridUnified(fn)
	}()
	return <-done
}

func belowHybridUnified(fn func(dir string) error) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("a mount namespace: unshare: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make mounts slave: %w", err)
	}
	if err := unix.Unmount(HybridUnified, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach %s: %w", HybridUnified, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(HybridUnified, &st); err != nil {
		return err
	}
	if st.Type != unix.TMPFS_MAGIC {
		return fmt.Errorf("%s is not on the cgroup tmpfs once its mount is detached (filesystem type %#x)", HybridUnified, st.Type)
	}
	return fn(HybridUnified)
}
