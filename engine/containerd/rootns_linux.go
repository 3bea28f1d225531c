package containerd

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// daemonSharesMounts reports whether the daemon listening on address runs
// in this process's mount namespace: the process on the socket's other end
// (SO_PEERCRED) has the same /proc/PID/ns/mnt. Its shims are its children,
// in the same namespace, so a mount this launcher makes below the bundle
// (the root's tmpfs, Runtime.RootTmpfs) is what their runtime sees. Any
// doubt answers false.
func daemonSharesMounts(address string) bool {
	c, err := net.DialTimeout("unix", address, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	if ctlErr := raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); ctlErr != nil || err != nil || cred.Pid <= 0 {
		return false
	}
	theirs, err := os.Readlink("/proc/" + strconv.Itoa(int(cred.Pid)) + "/ns/mnt")
	if err != nil {
		return false
	}
	ours, err := os.Readlink("/proc/self/ns/mnt")
	return err == nil && theirs == ours
}

// sameRoot checks that the task's first process, pid, has as its root the
// file system of the bundle's root directory, root: the tmpfs this
// launcher mounted there, not the directory below it, which a runtime in
// a mount namespace that lacks the mount would have used.
func sameRoot(pid int, root string) error {
	var task, bundle unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(pid)+"/root", &task); err != nil {
		return fmt.Errorf("the task's root: %w", err)
	}
	if err := unix.Stat(root, &bundle); err != nil {
		return fmt.Errorf("the bundle's root: %w", err)
	}
	if task.Dev != bundle.Dev {
		return fmt.Errorf("the task's root (device %d) is not the tmpfs on the bundle's root %s (device %d): the daemon's shim does not see this launcher's mounts", task.Dev, root, bundle.Dev)
	}
	return nil
}
