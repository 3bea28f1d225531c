package engine

import (
	"context"
	"os/exec"
	"syscall"

	"github.com/agentbox/agentbox/internal/nsexec"
)

// mntnsCommand wraps a runtime invocation: the helper starts in a new
// mount namespace, detaches the mount at hide there (unless hide is ""),
// lays out the composition file compose (unless ""), and executes the
// runtime.
func mntnsCommand(ctx context.Context, helper, hide, compose, path string, args []string) *exec.Cmd {
	argv := []string{nsexec.MntnsExec}
	if hide != "" {
		argv = append(argv, "--umount", hide)
	}
	if compose != "" {
		argv = append(argv, "--compose", compose)
	}
	argv = append(append(argv, "--", path), args...)
	cmd := exec.CommandContext(ctx, helper, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	return cmd
}
