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
func Live() Host { return Host{Root: "/", Sys: liveSystem{}, Darwin: liveDarwin} }

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

func (liveSystem) EUID() int { return os.Geteuid() }

func (liveSystem) Getenv(name string) string { return os.Getenv(name) }

// Writable asks the kernel: access(2) with W_OK, as `agentbox run` does.
func (liveSystem) Writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

// errProbeNotRun marks a probe that could not be attempted at all, as
// opposed to one the kernel refused.
var errProbeNotRun = errors.New("probe not run")
