package launcher

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/policy"
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

// darwinIsolation is the policy of a run on macOS, where the dedicated
// account is the only isolation: a policy that names none gets
// IsolationUser, and note is the one line that says so ("" when the
// policy asked for it).
func darwinIsolation(p policy.Policy) (_ policy.Policy, note string) {
	if p.Isolation == policy.IsolationUser {
		return p, ""
	}
	p.Isolation = policy.IsolationUser
	return p, "agentbox: macOS has no namespaces: the agent runs as the dedicated account " + account.DarwinName + " (--isolation user)"
}
