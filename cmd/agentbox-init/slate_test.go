//go:build linux

package main

import (
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSlateRefusesWhatTheProbesLeft: the check before the agent's exec
// refuses a child left behind and a changed limit, restores the umask, and
// leaves no fd above stdio open across an exec.
func TestSlateRefusesWhatTheProbesLeft(t *testing.T) {
	found, err := takeSlate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := found.check(); err != nil {
		t.Fatalf("an untouched process: %v", err)
	}

	child := exec.Command("sleep", "10")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	err = found.check()
	_ = child.Process.Kill()
	_ = child.Wait()
	if err == nil || !strings.Contains(err.Error(), "left a child") {
		t.Errorf("with a child: %v, want a refusal", err)
	}

	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lower := lim
	lower.Cur--
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lower); err != nil {
		t.Fatal(err)
	}
	err = found.check()
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if err == nil || !strings.Contains(err.Error(), "resource limit") {
		t.Errorf("with a lowered limit: %v, want a refusal", err)
	}

	was := unix.Umask(0o077)
	unix.Umask(0o077)
	fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	err = found.check()
	if now := unix.Umask(was); err != nil || now != was || now != found.umask {
		t.Errorf("check: %v; umask %#o after it, want %#o as found", err, now, found.umask)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("fd %d opened without close-on-exec: flags %#x (%v), want FD_CLOEXEC", fd, flags, err)
	}
}
