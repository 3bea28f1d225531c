// Package nsexec holds the two tiny helpers through which agentbox runs an
// OCI runtime in a namespace of its own: userns-exec (a rootless launcher's
// outer user namespace, see engine.UserNS) and mntns-exec (a mount
// namespace without one mount, see engine.HiddenUnified). The engine starts
// the helper with the namespace already cloned; the helper finishes the
// setup and executes the runtime. agentbox-init serves them, being small and
// static, so that each runtime call costs little more than the runtime.
package nsexec

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Commands are the helpers' names, the first argument of a helper call.
const (
	UsernsExec = "userns-exec"
	MntnsExec  = "mntns-exec"
)

// Main runs the helper named by args[0] and returns an exit status when it
// could not execute the runtime (on success it never returns).
func Main(args []string) int {
	if len(args) < 5 || args[3] != "--" {
		fmt.Fprintf(os.Stderr, "agentbox %s: usage: %s --sync-fd N|--umount PATH -- RUNTIME ARG... (run by agentbox itself)\n", args[0], args[0])
		return 2
	}
	var err error
	switch {
	case args[0] == UsernsExec && args[1] == "--sync-fd":
		err = waitForMaps(args[2])
	case args[0] == MntnsExec && args[1] == "--umount":
		err = hide(args[2])
	default:
		err = fmt.Errorf("unknown helper call %q %q", args[0], args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentbox %s: %v\n", args[0], err)
		return 4
	}
	argv := args[4:]
	err = syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "agentbox %s: exec %s: %v\n", args[0], argv[0], err)
	return 4
}

// waitForMaps blocks until the launcher has installed the id maps (it
// closes the pipe); executing the runtime afterwards gives it full
// capabilities as root of the new user namespace.
func waitForMaps(fdArg string) error {
	fd, err := strconv.Atoi(fdArg)
	if err != nil || fd < 3 {
		return fmt.Errorf("bad --sync-fd %q", fdArg)
	}
	sync := os.NewFile(uintptr(fd), "sync")
	defer sync.Close()
	if _, err := io.Copy(io.Discard, sync); err != nil {
		return fmt.Errorf("waiting for the id maps: %w", err)
	}
	return nil
}

// hide makes mounts slave (nothing done here reaches the host) and
// detaches path in this mount namespace.
func hide(path string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("hide %s: %w", path, err)
	}
	return nil
}
