package engine

import (
	"context"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/agentbox/agentbox/internal/nsexec"
)

// command wraps a runtime invocation: the helper starts in a new user
// namespace and waits on a pipe (the last extra file) until start has
// installed the maps.
func (n UserNS) command(ctx context.Context, path string, args []string, extra int, compose string) *exec.Cmd {
	argv := []string{nsexec.UsernsExec, "--sync-fd", strconv.Itoa(3 + extra)}
	if compose != "" {
		argv = append(argv, "--compose", compose)
	}
	argv = append(append(argv, "--", path), args...)
	cmd := exec.CommandContext(ctx, n.Helper, argv...)
	// A mount namespace of its own too: runc re-enters the runtime's mount
	// namespace to open bind sources, which it may only do in one that this
	// user namespace owns. Shared mounts arrive as slaves there, so nothing
	// propagates back to the host.
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}
	return cmd
}
