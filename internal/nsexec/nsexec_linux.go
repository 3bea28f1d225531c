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

// hide makes mounts slave (nothing done here reaches the host) and covers
// path, in this mount namespace, with an empty tmpfs of its own: the
// runtime's statfs of path finds no cgroup2 there (HiddenUnified), and
// nothing of what was mounted at path is reachable through it.
//
// The cover takes what crun writes there: in legacy mode crun still
// makes a directory for the "0::" line of /proc/self/cgroup under path,
// with a cgroup.procs file in it, and never removes it. Where path was
// detached instead, those went into the directory below the mount, on
// the host's /sys/fs/cgroup tmpfs (a directory and a file per launch,
// hidden from the host under its own mount); the cover goes with the
// namespace. And a mount waits for no RCU grace period, where the
// unmount waited for an expedited one (namespace_unlock, about 1 ms
// here) on the runtime's way.
func hide(path string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("agentbox-cover", path, "tmpfs", flags, "size=256k,nr_inodes=1024,mode=0755"); err != nil {
		return fmt.Errorf("hide %s: %w", path, err)
	}
	return nil
}

// helperFlags are the flags each helper takes.
var helperFlags = map[string][]string{
	UsernsExec: {"--sync-fd", "--compose"},
	MntnsExec:  {"--umount", "--compose"},
}
