package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// NewGrant prepares the grant of workspace to the agent's host ids: it
// records the workspace's owner (who the agent's files go back to) and
// identity from the opened directory, not from its path.
func NewGrant(workspace string, uid, gid uint32, lockDir string) (*Grant, error) {
	fd, st, err := openWalkRoot(workspace)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	defer unix.Close(fd)
	return &Grant{
		Workspace: workspace, UID: uid, GID: gid, OwnerUID: st.Uid, OwnerGID: st.Gid,
		Dev: st.Dev, Ino: st.Ino, Born: birth(fd), Mode: st.Mode & 0o7777, LockDir: lockDir, Method: GrantACL,
	}, nil
}

// Apply grants g.UID rwX on every directory and regular file of the
// workspace (under GrantChown it lends them to g.UID instead, see
// runsc_grant_linux.go). Symlinks, special files, other mounts and entries replaced
// while it runs are never followed or changed; the first error stops it.
func (g *Grant) Apply() (GrantReport, error) {
	rep := GrantReport{Method: g.method()}
	fd, st, err := g.open()
	if err != nil {
		return rep, fmt.Errorf("grant %s: %w", g.Workspace, err)
	}
	defer unix.Close(fd)
	unlock, err := g.lock(&st)
	if err != nil {
		return rep, err
	}
	defer unlock()
	w := &walker{openFiles: true, stopOnError: true, skipChanged: true}
	w.visit = g.grantNode(w, protectedHardlinks())
	var l *lender
	if g.method() == GrantChown {
		l = &lender{g: g, w: w, rep: &rep}
		w.visit = l.lendNode
	}
	w.run(fd, st)
	if l != nil {
		l.done()
	}
	rep.Walked, rep.Skipped = w.nodes, w.skipped.lines()
	if err := w.err(); err != nil {
		return rep, fmt.Errorf("grant %s: %w", g.Workspace, err)
	}
	return rep, nil
}

// grantNode adds the agent's entries to one node. With hard links
// unprotected (fs.protected_hardlinks=0) the agent could link any file of
// the file system into the workspace; a file with more than one link is
// then left alone.
func (g *Grant) grantNode(w *walker, linksProtected bool) func(*node) error {
	return func(n *node) error {
		switch n.kind() {
		case unix.S_IFDIR:
			if err := g.addEntry(n.fd, xattrAccess, n.st.Mode, 7); err != nil {
				return err
			}
			return g.addEntry(n.fd, xattrDefault, n.st.Mode, 7)
		case unix.S_IFREG:
			if n.st.Nlink > 1 && !linksProtected {
				w.skipped.add(w.where(n.name) + ": has other hard links and fs.protected_hardlinks is off: not granted")
				return nil
			}
			perm := uint16(6)
			if n.st.Mode&0o100 != 0 {
				perm = 7
			}
			return g.addEntry(n.fd, xattrAccess, n.st.Mode, perm)
		}
		return nil
	}
}

// open opens the workspace root and checks that it is the one granted.
func (g *Grant) open() (int, unix.Stat_t, error) {
	fd, st, err := openWalkRoot(g.Workspace)
	if err != nil {
		return -1, st, err
	}
	if g.Ino != 0 && (st.Dev != g.Dev || st.Ino != g.Ino) || g.Born != 0 && birth(fd) != g.Born {
		unix.Close(fd)
		return -1, st, errNotGranted
	}
	return fd, st, nil
}

// birth is fd's birth time in ns, 0 when the file system has none.
func birth(fd int) int64 {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &stx); err != nil || stx.Mask&unix.STATX_BTIME == 0 {
		return 0
	}
	return stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
}

func (g *Grant) addEntry(fd int, name string, mode uint32, perm uint16) error {
	acl, err := readACL(fd, name, mode)
	if err != nil {
		return err
	}
	return writeACL(fd, name, withUser(acl, g.UID, perm))
}

// protectedHardlinks reports whether the kernel stops users from linking
// files they do not own (fs.protected_hardlinks=1, the default).
func protectedHardlinks() bool {
	b, err := os.ReadFile("/proc/sys/fs/protected_hardlinks")
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// lock takes the workspace's lock, waiting for another run's grant or
// revoke on the same directory to finish, and returns its release.
func (g *Grant) lock(st *unix.Stat_t) (func(), error) {
	if g.LockDir == "" {
		return nil, errors.New("workspace grant: no lock directory")
	}
	if err := os.MkdirAll(g.LockDir, 0o700); err != nil {
		return nil, fmt.Errorf("workspace grant lock: %w", err)
	}
	path := filepath.Join(g.LockDir, fmt.Sprintf("%d-%d.lock", st.Dev, st.Ino))
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workspace grant lock: %w", err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("workspace grant lock: %w", err)
	}
	return func() { unix.Close(fd) }, nil
}

func (g *Grant) method() string {
	if g.Method == "" {
		return GrantACL
	}
	return g.Method
}

// errNotGranted says the workspace found is not the directory granted.
var errNotGranted = errors.New("not the directory that was granted")
