package engine

import (
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
