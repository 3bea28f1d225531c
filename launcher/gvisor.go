package launcher

import (
	"fmt"
	"net"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/netpolicy/bridge"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp"
	"github.com/agentbox/agentbox/selftest"
)

// gVisor (runsc): the agent runs on gVisor's Sentry, a kernel in user
// space, which refuses every host unix socket (runsc's default
// --host-uds=none): the gateway's socket is not bound in, and init's bridge
// gets each gateway connection from the launcher over a second channel,
// its fd 4 (bridge.Dialer), which the launcher answers with a connection
// to the run's gateway socket and to nothing else.

// Under gVisor the agent's seccomp filter is not runsc's to apply: its
// --oci-seccomp converts every SCMP_ACT_ERRNO of the spec into EPERM,
// whatever errnoRet says (runsc/specutils/seccomp), so clone3 would fail
// with EPERM instead of the profile's ENOSYS, and glibc, which falls back to
// clone on ENOSYS only, could start no thread (node, python, every agent
// CLI). The bundle's filter is compiled here instead and loaded by init's
// children, the probes and the agent, with seccomp(2), which the Sentry
// runs with the filter's own return values; init itself runs unfiltered
// inside the Sentry, as agentbox's own code.

// compileSentryFilter compiles the seccomp filter of s, the spec of the
// bundle, for init's children under runsc.
func (p *prepared) compileSentryFilter(s *specs.Spec) error {
	if p.plan.Runtime.Name != "runsc" || s.Linux == nil || s.Linux.Seccomp == nil {
		return nil
	}
	prog, err := seccomp.Compile(s.Linux.Seccomp)
	if err != nil {
		return fmt.Errorf("compile the seccomp filter for gVisor: %w", err)
	}
	p.sentryFilter = prog.BPF
	return nil
}

// gvisorInit gives init's children the filter under runsc.
func (p *prepared) gvisorInit(ic *selftest.InitConfig) {
	if p.sentryFilter != nil {
		ic.Agent.Seccomp = p.sentryFilter
	}
}

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
