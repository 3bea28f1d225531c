package engine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes this process the child subreaper of its
// descendants, so that a sandbox's first process, orphaned when the
// runtime's create command exits, becomes this process's child and its
// exit status can be collected.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	return nil
}

// Wait waits for process pid, a child of this process, and returns its
// exit code: its exit status, or 128 plus the signal that killed it.
func Wait(pid int) (int, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("wait for sandbox pid %d: %w", pid, err)
		}
		break
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}
