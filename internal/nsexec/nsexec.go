// Package nsexec holds the tiny helpers through which agentbox runs an
// OCI runtime in a namespace of its own: userns-exec (a rootless launcher's
// outer user namespace, see engine.UserNS) and mntns-exec (a mount
// namespace without one mount, see engine.HiddenUnified, or with the
// nested binds of a Composition laid out); fds-exec (FdsExec) is the runc
// a containerd shim runs, which fetches the sandbox's extra files from the
// launcher before the create. The engine starts
// the helper with the namespace already cloned; the helper finishes the
// setup and executes the runtime. agentbox-init serves them, being small and
// static, so that each runtime call costs little more than the runtime.
package nsexec

import (
	"fmt"
	"io"
	"os"
	"slices"
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
// could not execute the runtime (on success it never returns). Its flags,
// before "--": userns-exec takes --sync-fd N, mntns-exec --umount PATH;
// both take --compose FILE (see Composition), done last.
func Main(args []string) int {
	flags, argv, err := parseArgs(args)
	if err == nil && args[0] == FdsExec {
		return fdsMain(flags, argv)
	}
	if err == nil {
		argv, err = setup(args[0], flags, argv)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentbox %s: %v\n", args[0], err)
		return 4
	}
	err = syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "agentbox %s: exec %s: %v\n", args[0], argv[0], err)
	return 4
}

// parseArgs reads "--flag value" pairs up to "--" and the runtime's argv
// after it.
func parseArgs(args []string) (map[string]string, []string, error) {
	flags := map[string]string{}
	i := 1
	for ; i+1 < len(args) && args[i] != "--"; i += 2 {
		flags[args[i]] = args[i+1]
	}
	if i >= len(args) || args[i] != "--" || i+1 >= len(args) {
		return nil, nil, fmt.Errorf("usage: %s --sync-fd N|--umount PATH [--compose FILE] -- RUNTIME ARG... (run by agentbox itself)", args[0])
	}
	return flags, args[i+1:], nil
}

// helperFlags are the flags each helper takes.
var helperFlags = map[string][]string{
	UsernsExec: {"--sync-fd", "--compose"},
	MntnsExec:  {"--umount", "--compose"},
}

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
	if p, ok := flags["--umount"]; ok {
		if err := hide(p); err != nil {
			return nil, err
		}
	}
	if composing {
		return argv, compose(file)
	}
	return argv, nil
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
