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
	"os"
	"syscall"
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
