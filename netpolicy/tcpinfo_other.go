//go:build !linux

package netpolicy

import (
	"net"
	"time"
)

// tcpIdle is unavailable off Linux; tunnels fall back to a stamped copy.
func tcpIdle(*net.TCPConn) (time.Duration, bool) { return 0, false }

func tcpInfoWorks(*net.TCPConn) bool { return false }
