package launcher

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// statTimes are a stat's modification and change times.
func statTimes(st *syscall.Stat_t) (mtim, ctim syscall.Timespec) {
	return st.Mtimespec, st.Ctimespec
}

// plantWorkspaceSocket listens on a socket in the workspace as a host
// program would, for workspace-socket-unreachable, at the name the plan
// covers. darwin has no O_PATH and no /proc/self/fd to bind through a
// descriptor, so it binds by path, in the workspace's own directory
// resolved (no symlink on the way; only the invoker can replace a
// directory above it) at a random name that bind creates new (an entry
// there, a symlink included, fails it): nothing the workspace's last agent
// left is followed. A path past sockaddr_un's 104 bytes gets no canary,
// and the probe says UNKNOWN (no-canary). gc removes it after a crash.
func (p *prepared) plantWorkspaceSocket() error {
	ws, err := filepath.EvalSymlinks(p.ws.root)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	path := filepath.Join(ws, p.canary.socket)
	if len(path) >= len(unix.RawSockaddrUnix{}.Path) {
		return nil
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("workspace socket canary: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // removed by path, with the other canaries
	c := &p.canaries
	c.workspace = c.serve(ln, path)
	c.files = append(c.files, path)
	p.meta.Canaries = c.files
	if err := p.runDir.WriteMeta(p.meta); err != nil {
		return err
	}
	// Connectable by every uid, so only the sandbox's layers refuse the
	// probe; AT_SYMLINK_NOFOLLOW: never through a link swapped in.
	if err := unix.Fchmodat(unix.AT_FDCWD, path, 0o666, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return errors.Join(errors.New("workspace socket canary: make it connectable"), err)
	}
	return nil
}

// socketCloexec is 0 on darwin, which has no SOCK_CLOEXEC; the one caller
// (gVisor's bridge dialer) is never reached there, runsc being Linux's.
const socketCloexec = 0
