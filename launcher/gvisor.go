package launcher

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/netpolicy/bridge"
	"github.com/agentbox/agentbox/policy"
)

// gVisor (runsc): the agent runs on gVisor's Sentry, a kernel in user
// space, which refuses every host unix socket (runsc's default
// --host-uds=none): the gateway's socket is not bound in, and init's bridge
// gets each gateway connection from the launcher over a second channel,
// its fd 4 (bridge.Dialer), which the launcher answers with a connection
// to the run's gateway socket and to nothing else.

// gvisorBridge is the launcher's end of init's bridge dialer.
type gvisorBridge struct {
	mine *net.UnixConn
	end  *os.File // init's fd 4; closed here once the runtime has it
}

// usesDialer reports whether the plan's sandbox gets its gateway through
// the dialer: runsc, with a gateway.
func usesDialer(p *policy.Plan) bool {
	return p.Runtime.Name == "runsc" && p.GatewaySocket != ""
}

// openDialer makes the dialer's socketpair when the plan needs one.
func (p *prepared) openDialer() error {
	if !usesDialer(p.plan) {
		return nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|socketCloexec, 0)
	if err != nil {
		return fmt.Errorf("bridge dialer: socketpair: %w", err)
	}
	mf := os.NewFile(uintptr(fds[0]), "bridge-dialer")
	defer mf.Close()
	c, err := net.FileConn(mf)
	if err != nil {
		unix.Close(fds[1])
		return fmt.Errorf("bridge dialer: %w", err)
	}
	p.dialer = &gvisorBridge{mine: c.(*net.UnixConn), end: os.NewFile(uintptr(fds[1]), "bridge-dialer-init")}
	return nil
}

// extraFiles are init's fds from 3 on: its channel, and the dialer.
func (p *prepared) extraFiles() []*os.File {
	files := []*os.File{p.initEnd}
	if p.dialer != nil {
		files = append(files, p.dialer.end)
	}
	return files
}

// serveDialer closes init's end of the dialer here and answers init's
// requests with connections to the gateway's socket until init is gone.
func (p *prepared) serveDialer() {
	if p.dialer == nil {
		return
	}
	p.dialer.end.Close()
	go func() { _ = bridge.ServeDialer(p.dialer.mine, p.plan.GatewaySocket) }()
}

// closeDialer ends the dialer at teardown.
func (p *prepared) closeDialer() {
	if p.dialer != nil {
		p.dialer.mine.Close()
		p.dialer.end.Close() // already closed unless the create failed
	}
}
