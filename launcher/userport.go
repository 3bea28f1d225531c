package launcher

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// freeLoopbackPort is a TCP port free on both 127.0.0.1 and ::1 now.
// agentbox-init binds it for the run's gateway; should another program
// take it first, init fails to and the launch stops there.
func freeLoopbackPort() (int, error) {
	for range 20 {
		l4, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("choose the gateway's loopback port: %w", err)
		}
		port := l4.Addr().(*net.TCPAddr).Port
		l6, err := net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(port)))
		l4.Close()
		if err == nil {
			l6.Close()
			return port, nil
		}
	}
	return 0, errors.New("choose the gateway's loopback port: no port was free on both 127.0.0.1 and ::1")
}
