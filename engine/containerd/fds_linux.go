package containerd

import (
	"net"

	"golang.org/x/sys/unix"
)

func peerIsRoot(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	ctlErr := raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	return ctlErr == nil && err == nil && cred.Uid == 0
}
