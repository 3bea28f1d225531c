package launcher

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// plantWorkspaceSocket listens on a socket in the workspace as a host
// program would, for workspace-socket-unreachable, at the name the plan
// covers (canaryPlan.socket). It binds through an fd of the workspace (so
// that no path is re-resolved and a long workspace path fits a sockaddr),
// and makes the socket connectable by anyone, so that only the sandbox's
// own layers can refuse the probe. gc removes it after a crash (meta.json
// names it before it exists).
func (p *prepared) plantWorkspaceSocket() error {
	ws, name := p.ws.root, p.canary.socket
	dir, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	defer unix.Close(dir)
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(dir)+"/"+name)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // removed by path below, with the other canaries
	path := filepath.Join(ws, name)
	c := &p.canaries
	c.workspace = c.serve(ln, path)
	c.files = append(c.files, path) // meta.json named it already (canaryNames)
	return chmodSocket(dir, name)
}

// chmodSocket makes the socket name below dir connectable by every uid,
// through an O_PATH fd checked to be that socket: never a symlink the
// name might have been swapped for.
func chmodSocket(dir int, name string) error {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return errors.Join(errors.New("workspace socket canary: replaced before it was made connectable"), err)
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o666)
}
