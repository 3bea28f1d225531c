package netpolicy

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// tcpIdle reads how long ago c last sent or received data, from TCP_INFO.
func tcpIdle(c *net.TCPConn) (time.Duration, bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var info *unix.TCPInfo
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		info, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || gerr != nil {
		return 0, false
	}
	ms := min(info.Last_data_recv, info.Last_data_sent)
	return time.Duration(ms) * time.Millisecond, true
}

func tcpInfoWorks(c *net.TCPConn) bool {
	_, ok := tcpIdle(c)
	return ok
}
