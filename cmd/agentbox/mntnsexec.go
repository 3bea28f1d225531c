package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mntns-exec runs an OCI runtime with one mount hidden (engine.Runtime.Hide):
// started in a fresh mount namespace, it turns propagation to slave (nothing
// it does reaches the host), detaches the mount, and becomes the runtime.
// Not for people, so not listed in the help.
func init() {
	register(command{name: "mntns-exec", run: runMntnsExec})
}

func runMntnsExec(_ context.Context, s stdio, args []string) int {
	if len(args) < 4 || args[0] != "--umount" || args[2] != "--" {
		fmt.Fprintln(s.Err, "agentbox mntns-exec: usage: mntns-exec --umount PATH -- RUNTIME ARG... (run by agentbox itself)")
		return exitUsage
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		fmt.Fprintln(s.Err, "agentbox mntns-exec: make mounts private:", err)
		return exitHost
	}
	if err := unix.Unmount(args[1], unix.MNT_DETACH); err != nil {
		fmt.Fprintf(s.Err, "agentbox mntns-exec: hide %s: %v\n", args[1], err)
		return exitHost
	}
	argv := args[3:]
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(s.Err, "agentbox mntns-exec: exec %s: %v\n", argv[0], err)
	return exitHost
}
