package containerd

import (
	"errors"
	"net"
	"os"
)

// errNotLinux is the containerd engine's answer on darwin: its shims run
// Linux OCI runtimes.
var errNotLinux = errors.New("the containerd engine needs Linux namespaces; on macOS agentbox runs the agent as a dedicated account: --isolation user")

// peerIsRoot is false on darwin: the fd server hands nothing over there.
func peerIsRoot(*net.UnixConn) bool { return false }

// openPty refuses, as the engine does on darwin.
func openPty() (master, peer *os.File, err error) { return nil, nil, errNotLinux }
