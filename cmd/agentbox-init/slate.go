//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/selftest"
)

// The agent's process runs the probes before it executes the agent (see
// starter), so whatever a probe leaves in the process the agent would
// inherit. The probes are written to leave nothing (selftest.Run: each
// closes what it opens, a probe that changes its thread keeps that thread
// to itself, none changes process-wide state), and a probe whose operation
// the kernel allowed fails, which refuses the launch. The slate is the
// check that holds even so: what the process had once it was the agent,
// before the first probe, compared right before the exec, on the thread
// that executes (no probe ever runs on it: it is locked to the starter's
// main goroutine).

// slate is what the agent's process held once it was the agent.
type slate struct {
	user   *selftest.Credential // nil: init's own ids, nothing to compare
	umask  int
	limits []unix.Rlimit // by resource, 0 to rlimits-1
}

// rlimits is the number of resources getrlimit(2) knows (RLIMIT_CPU to
// RLIMIT_RTTIME).
const rlimits = 16

// takeSlate records the process's slate as it is now.
func takeSlate(u *selftest.Credential) (*slate, error) {
	s := &slate{user: u, umask: unix.Umask(0o077)}
	unix.Umask(s.umask)
	s.limits = make([]unix.Rlimit, rlimits)
	for r := range s.limits {
		if err := unix.Getrlimit(r, &s.limits[r]); err != nil {
			return nil, fmt.Errorf("read resource limit %d: %w", r, err)
		}
	}
	return s, nil
}

// check refuses a process that the probes changed: a child left behind
// (the agent would be its parent), limits or ids not as found, a
// capability gained. It sets the umask as found (a probe that created
// files may have narrowed it; widening it back gives nothing a probe did
// not start with) and marks every fd above stdio close-on-exec, so that
// nothing a probe opened reaches the agent, whatever its flags.
func (s *slate) check() error {
	switch pid, err := unix.Wait4(-1, nil, unix.WNOHANG|unix.WALL, nil); {
	case errors.Is(err, unix.ECHILD):
	case err != nil:
		return fmt.Errorf("look for children: %w", err)
	default:
		return fmt.Errorf("a probe left a child process behind (pid %d)", pid)
	}
	for r, want := range s.limits {
		var got unix.Rlimit
		if err := unix.Getrlimit(r, &got); err != nil {
			return fmt.Errorf("read resource limit %d: %w", r, err)
		}
		if got != want {
			return fmt.Errorf("resource limit %d is %d/%d, was %d/%d before the probes", r, got.Cur, got.Max, want.Cur, want.Max)
		}
	}
	if s.user != nil {
		if err := checkAgent(s.user); err != nil {
			return err
		}
	}
	unix.Umask(s.umask)
	return closeOnExecAbove(2)
}

// closeOnExecAbove marks every fd above fd close-on-exec: with
// close_range(2), or one by one from /proc/self/fd where the kernel has
// no CLOSE_RANGE_CLOEXEC (before Linux 5.11).
func closeOnExecAbove(fd int) error {
	err := unix.CloseRange(uint(fd+1), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil || !(errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL)) {
		return err
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		if f, err := strconv.Atoi(n); err == nil && f > fd {
			unix.CloseOnExec(f) // the directory's own fd is gone already: EBADF, nothing to mark
		}
	}
	return nil
}
