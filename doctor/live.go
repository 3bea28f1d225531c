package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// commandTimeout bounds each command doctor runs (a runtime's --version, a
// package query).
const commandTimeout = 15 * time.Second

// Live returns this machine as a Host.
func Live() Host { return Host{Root: "/", Sys: liveSystem{}} }

// liveSystem is System on this machine.
type liveSystem struct{}

func (liveSystem) Stat(path string) (FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileInfo{}, err
	}
	out := FileInfo{Mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.UID, out.GID = st.Uid, st.Gid
	}
	return out, nil
}

func (liveSystem) LookPath(name string) (string, error) { return exec.LookPath(name) }

// Output runs name with a bounded time, no standard input and the C locale,
// so that version strings are not translated.
func (liveSystem) Output(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", strings.Join(append([]string{name}, args...), " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

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

func (liveSystem) EUID() int { return os.Geteuid() }

func (liveSystem) Getenv(name string) string { return os.Getenv(name) }

// Writable asks the kernel: access(2) with W_OK, as `agentbox run` does.
func (liveSystem) Writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

// errProbeNotRun marks a probe that could not be attempted at all, as
// opposed to one the kernel refused.
var errProbeNotRun = errors.New("probe not run")
