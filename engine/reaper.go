package engine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

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
