package containerd

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// openPty opens a new pty pair; the peer end is raw, so that what passes
// through it is relayed unchanged (the sandbox's own pty does the
// terminal's work).
func openPty() (master, peer *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open a pty: %w", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		return nil, nil, fmt.Errorf("unlock the pty: %w", err)
	}
	p, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		err = errno
		unix.Close(m)
		return nil, nil, fmt.Errorf("open the pty's peer: %w", err)
	}
	master, peer = os.NewFile(uintptr(m), "agentbox-pty-master"), os.NewFile(p, "agentbox-pty")
	if _, err := term.MakeRaw(int(p)); err != nil {
		master.Close()
		peer.Close()
		return nil, nil, fmt.Errorf("make the pty raw: %w", err)
	}
	return master, peer, nil
}
