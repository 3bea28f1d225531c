package nsexec

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// setup does what the flags ask, in order: the id maps, the hidden mount,
// the composition; it returns what to execute. userns-exec has no
// capabilities until it executes something (it ran its exec before the
// maps existed), so with --compose it executes itself again, as
// mntns-exec, which then has them in its namespaces.
func setup(helper string, flags map[string]string, argv []string) ([]string, error) {
	known, ok := helperFlags[helper]
	if !ok {
		return nil, fmt.Errorf("unknown helper %q", helper)
	}
	for f := range flags {
		if !slices.Contains(known, f) {
			return nil, fmt.Errorf("unknown flag %s for %s", f, helper)
		}
	}
	file, composing := flags["--compose"]
	if helper == UsernsExec {
		if err := waitForMaps(flags["--sync-fd"]); err != nil {
			return nil, err
		}
		if composing {
			return append([]string{"/proc/self/exe", MntnsExec, "--compose", file, "--"}, argv...), nil
		}
	}
	return argv, Prepare(flags["--umount"], file)
}

// Prepare does in this mount namespace, which must be a new one of the
// calling thread (or process), what mntns-exec does before it executes the
// runtime: it hides the mount at hidden, then lays out the composition
// file composition; "" skips either. The engine calls it on a locked
// thread that it unshared, and starts the runtime from that thread, which
// saves the helper's process (see engine's runInMountNS).
func Prepare(hidden, composition string) error {
	if hidden != "" {
		if err := hide(hidden); err != nil {
			return err
		}
	}
	if composition != "" {
		return compose(composition)
	}
	return nil
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

// helperFlags are the flags each helper takes.
var helperFlags = map[string][]string{
	UsernsExec: {"--sync-fd", "--compose"},
	MntnsExec:  {"--umount", "--compose"},
}
