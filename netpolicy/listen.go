package netpolicy

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
)

// splitListen splits "unix:/path" or "tcp:host:port" into network and address.
func splitListen(spec string) (network, addr string, err error) {
	network, addr, ok := strings.Cut(spec, ":")
	if !ok || addr == "" || (network != "unix" && network != "tcp") {
		return "", "", fmt.Errorf("%q: want unix:/path/to.sock or tcp:HOST:PORT", spec)
	}
	if network == "unix" && !strings.HasPrefix(addr, "/") {
		return "", "", fmt.Errorf("%q: the socket path must be absolute", spec)
	}
	if network == "tcp" {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", "", fmt.Errorf("%q: want tcp:HOST:PORT: %w", spec, err)
		}
	}
	return network, addr, nil
}

// Listen opens the listener a Listen spec names ("unix:/path/to.sock" or
// "tcp:HOST:PORT"). A unix socket is created with mode 0660; see ListenUnix.
func Listen(spec string) (net.Listener, error) {
	network, addr, err := splitListen(spec)
	if err != nil {
		return nil, err
	}
	if network == "unix" {
		return ListenUnix(addr, 0o660)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// ListenUnix listens on a unix socket at path with the given mode. A stale
// socket left by a crashed run is replaced; any other file at path is an
// error. The socket is removed when the listener is closed.
//
// The sandbox reaches the socket through a bind mount, so the mode must let
// the sandbox's mapped uid connect (write permission on the socket); keep the
// directory holding it closed to other host users (0700).
func ListenUnix(path string, mode fs.FileMode) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("listen on %s: a %s is in the way; remove it or pick another path", path, fi.Mode().Type())
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	l.SetUnlinkOnClose(true)
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	return l, nil
}
