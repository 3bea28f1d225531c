//go:build linux

package main

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/selftest"
)

// Init and the agent are two uids (policy.InitIdentity): init is uid 0 of
// the user namespace with CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_CHOWN and
// CAP_KILL, and every child it starts becomes the agent before it executes
// anything. The agent, another uid with no capability, can then neither signal init,
// ptrace it nor change its limits with prlimit (the kernel's credential
// checks all need a shared uid or a capability over the namespace).

// maxCap bounds the capability numbers tried; PR_CAPBSET_* answer EINVAL
// beyond the kernel's last one.
const maxCap = 63

// becomeAgent switches the calling process to u and proves that it holds
// nothing more: the sandbox's terminal handed over (with tty), bounding set
// emptied (CAP_SETPCAP), no supplementary group, gid and then uid set (real,
// effective, saved), which makes the kernel clear the permitted, effective
// and ambient sets since no uid is 0 any more; inheritable is empty from the
// spec. The calling thread stays locked, so that the exec that follows runs
// on the thread checked here. A nil u changes nothing: init then is the
// agent's uid and holds no capability itself.
func becomeAgent(u *selftest.Credential, tty bool) error {
	runtime.LockOSThread()
	if u == nil {
		return nil
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"hand the terminal over", func() error { return giveTerminal(u, tty) }},
		{"empty the bounding set", func() error { return dropBounding(-1) }},
		{"clear supplementary groups", func() error { return syscall.Setgroups(nil) }},
		{"set gid", func() error { return syscall.Setresgid(int(u.GID), int(u.GID), int(u.GID)) }},
		{"set uid", func() error { return syscall.Setresuid(int(u.UID), int(u.UID), int(u.UID)) }},
		{"clear ambient capabilities", func() error {
			return unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
		}},
		{"check", func() error { return checkAgent(u) }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return fmt.Errorf("become the agent (uid %d gid %d): %s: %w", u.UID, u.GID, s.name, err)
		}
	}
	return nil
}

// giveTerminal makes the agent the owner of the terminal on fd 0, through
// the fd (CAP_CHOWN), when it is the sandbox's own: a pty of the devpts
// mounted at /dev/pts, which the runtime made owned by init's uid. The agent
// can then open it by name (ttyname, /dev/pts/N) as its own terminal. A
// terminal of another devpts (the host's) or another owner is left alone.
func giveTerminal(u *selftest.Credential, tty bool) error {
	if !tty {
		return nil
	}
	var t, pts unix.Stat_t
	if err := unix.Fstat(0, &t); err != nil {
		return err
	}
	if err := unix.Stat("/dev/pts", &pts); err != nil {
		return err
	}
	if t.Mode&unix.S_IFMT != unix.S_IFCHR || t.Dev != pts.Dev || t.Uid != uint32(unix.Getuid()) {
		return nil
	}
	return unix.Fchown(0, int(u.UID), int(u.GID))
}

// dropBounding removes every capability but keep (-1: none) from the
// bounding set of every thread. Only the capabilities still in the set are
// dropped: each AllThreadsSyscall stops every thread of the process, and
// the runtime leaves init with a handful of capabilities out of some forty
// (dropping all of them one by one cost about 3 ms per call, more under
// load). The set read on this thread is every thread's: they all inherited
// it from the exec, and every change to it here is made on all threads at
// once. checkAgent reads the whole set again afterwards.
func dropBounding(keep int) error {
	for c := 0; c <= maxCap; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		switch {
		case errors.Is(err, unix.EINVAL):
			return nil // past the kernel's last capability
		case err != nil:
			return fmt.Errorf("read capability %d of the bounding set: %w", c, err)
		case c == keep || in == 0:
			continue
		}
		if _, _, en := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); en != 0 {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, en)
		}
	}
	return nil
}

// checkAgent refuses to go on unless this thread runs as u with every
// capability set empty.
func checkAgent(u *selftest.Credential) error {
	ru, eu, su := unix.Getresuid()
	rg, eg, sg := unix.Getresgid()
	for _, id := range []int{ru, eu, su} {
		if id != int(u.UID) {
			return fmt.Errorf("uids %d/%d/%d, want %d", ru, eu, su, u.UID)
		}
	}
	for _, id := range []int{rg, eg, sg} {
		if id != int(u.GID) {
			return fmt.Errorf("gids %d/%d/%d, want %d", rg, eg, sg, u.GID)
		}
	}
	sets, err := capSets()
	if err != nil {
		return err
	}
	if sets != [3]uint64{} {
		return fmt.Errorf("capabilities left: effective %#x, permitted %#x, inheritable %#x", sets[0], sets[1], sets[2])
	}
	for c := 0; c <= maxCap; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break
		}
		if err != nil {
			return fmt.Errorf("read capability %d of the bounding set: %w", c, err)
		}
		if in != 0 {
			return fmt.Errorf("capability %d is still in the bounding set", c)
		}
	}
	return nil
}

// capSets returns this thread's effective, permitted and inheritable sets.
func capSets() ([3]uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return [3]uint64{}, fmt.Errorf("capget: %w", err)
	}
	join := func(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }
	return [3]uint64{
		join(data[0].Effective, data[1].Effective),
		join(data[0].Permitted, data[1].Permitted),
		join(data[0].Inheritable, data[1].Inheritable),
	}, nil
}

// keepOnlyKill leaves init, once the agent runs, with CAP_KILL alone: it
// still forwards signals to the agent, a uid not its own, and nothing else
// it could do with CAP_SETUID, CAP_SETGID or CAP_SETPCAP remains (init
// serves the gateway bridge to the agent for the whole run). Every thread
// drops them, the bounding set first (that needs CAP_SETPCAP).
func keepOnlyKill() error {
	if err := dropBounding(unix.CAP_KILL); err != nil {
		return err
	}
	hdr := &unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := &[2]unix.CapUserData{{Effective: 1 << unix.CAP_KILL, Permitted: 1 << unix.CAP_KILL}}
	_, _, en := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	runtime.KeepAlive(hdr)
	runtime.KeepAlive(data)
	if en != 0 {
		return fmt.Errorf("capset: %w", en)
	}
	return nil
}
