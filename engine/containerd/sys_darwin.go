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

// daemonSharesMounts is false on darwin: no root is a tmpfs there.
func daemonSharesMounts(string) bool { return false }

// sameRoot has nothing to check on darwin, where no task is created.
func sameRoot(int, string) error { return errNotLinux }
