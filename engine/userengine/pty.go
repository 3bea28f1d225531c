//go:build linux

package userengine

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// A run with a terminal gets a fresh pty, never the launcher's terminal:
// the account holding the user's terminal could push keystrokes into the
// user's shell (TIOCSTI) or read what the user types after the run. The
// engine makes the pair as root, as an OCI runtime does for a sandbox
// (runc --console-socket): init gets the slave as fds 0, 1 and 2 and as
// its controlling terminal (a session of its own, TIOCSCTTY), and hands
// it to the agent's child (foreground group, ownership through the fd:
// agentbox-init's giveTerminal); the master is sent on the console socket
// to the launcher, which proxies the user's terminal to it (raw mode,
// window size, the output filter: engine.ProxyTerminal).

// openPty makes a pty pair: the master, and its slave opened through the
// master (TIOCGPTPEER), so that no /dev/pts path is resolved.
func openPty() (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		return nil, nil, fmt.Errorf("unlock the pty: %w", err)
	}
	s, _, en := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if en != 0 {
		unix.Close(m)
		return nil, nil, fmt.Errorf("open the pty's slave: %w", en)
	}
	return os.NewFile(uintptr(m), "pty-master"), os.NewFile(s, "pty-slave"), nil
}
