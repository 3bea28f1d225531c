package userengine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
)

// This file holds what of the macOS engine is darwin's own: the pty and
// the engine gc finds. Cross-compiled and vetted on Linux; it has never
// run on a Mac.

// openPty makes a pty pair as posix_openpt, grantpt, unlockpt and ptsname
// do on macOS (/dev/ptmx, then the TIOCPTYGRANT, TIOCPTYUNLK and
// TIOCPTYGNAME ioctls), and opens the slave by the name the master's
// ioctl gave, never by one read elsewhere.
func openPty() (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (*os.File, *os.File, error) {
		unix.Close(m)
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.IoctlSetInt(m, unix.TIOCPTYGRANT, 0); err != nil {
		return fail("grant the pty", err)
	}
	if err := unix.IoctlSetInt(m, unix.TIOCPTYUNLK, 0); err != nil {
		return fail("unlock the pty", err)
	}
	var name [128]byte // TIOCPTYGNAME writes up to 128 bytes
	//nolint:staticcheck // SA1019: x/sys wraps no ioctl that fills TIOCPTYGNAME's 128 bytes; libc's ptsname makes this same call
	if _, _, en := unix.Syscall(unix.SYS_IOCTL, uintptr(m), uintptr(unix.TIOCPTYGNAME), uintptr(unsafe.Pointer(&name[0]))); en != 0 {
		return fail("name the pty's slave", en)
	}
	n := bytes.IndexByte(name[:], 0)
	if n <= 0 {
		return fail("name the pty's slave", errors.New("no name"))
	}
	s, err := unix.Open(string(name[:n]), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open the pty's slave "+string(name[:n]), err)
	}
	return os.NewFile(uintptr(m), "pty-master"), os.NewFile(uintptr(s), "pty-slave"), nil
}

// Recorded is the engine of a run whose bundle has the macOS engine's
// record, for gc.
func Recorded(bundle string) (engine.Engine, bool) {
	e, ok := RecordedMac(bundle)
	if !ok {
		return nil, false
	}
	return e, true
}
