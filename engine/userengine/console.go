package userengine

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// sendConsole sends master on the unix socket at path, as one SCM_RIGHTS
// message (what engine.ConsoleSocket.Receive reads).
func sendConsole(path string, master *os.File) error {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("console socket: %w", err)
	}
	defer c.Close()
	rc, err := master.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	if err := rc.Control(func(fd uintptr) {
		_, _, werr = c.WriteMsgUnix([]byte("pty"), unix.UnixRights(int(fd)), nil)
	}); err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("console socket: send the pty: %w", werr)
	}
	return nil
}

// orNull is f, or null for a stream the caller gave none.
func orNull(f, null *os.File) *os.File {
	if f == nil {
		return null
	}
	return f
}
