package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// liveDarwin: this host is no Mac.
const liveDarwin = false

// LandlockABI calls landlock_create_ruleset(NULL, 0,
// LANDLOCK_CREATE_RULESET_VERSION), which returns the ABI version.
// ENOSYS (no Landlock in the kernel) and EOPNOTSUPP (built in but not an
// active LSM) mean 0.
func (liveSystem) LandlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == 0:
		return int(v), nil
	case errors.Is(errno, unix.ENOSYS), errors.Is(errno, unix.EOPNOTSUPP):
		return 0, nil
	}
	return 0, fmt.Errorf("landlock_create_ruleset: %w", errno)
}

// NewUserNamespace runs `true` in a new user namespace. The child has no id
// mapping; creating the namespace is all that is tried.
func (liveSystem) NewUserNamespace(ctx context.Context) error {
	bin, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("%w: %w", errProbeNotRun, err)
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	return cmd.Run()
}

// Statfs asks the kernel for the filesystem type under p.
func (liveSystem) Statfs(p string) (FSInfo, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return FSInfo{}, &os.PathError{Op: "statfs", Path: p, Err: err}
	}
	return FSInfo{Type: int64(st.Type)}, nil
}
