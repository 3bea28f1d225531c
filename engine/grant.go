package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Grant gives one host uid access to a workspace tree for the duration of a
// run, through POSIX ACLs. It is how a root-owned workspace is handed to an
// agent that must not be root on the host: the agent's host uid gets rwX
// (and the same as default ACL on directories, so new files inherit it),
// and Revoke takes it back and gives the agent's new files to the owner.
//
// Both walk the tree by file descriptors (walk.go): the agent of another
// run in the same workspace may be changing it meanwhile, and nothing it
// does can make root follow a symlink or leave the workspace's mount. Both
// hold a lock keyed by the workspace's device and inode in LockDir, so two
// runs never rewrite one ACL at once.
type Grant struct {
	Workspace string `json:"workspace"`
	UID       uint32 `json:"uid"`       // the agent's host uid
	GID       uint32 `json:"gid"`       // the agent's host gid
	OwnerUID  uint32 `json:"owner_uid"` // who the agent's files go back to
	OwnerGID  uint32 `json:"owner_gid"`
	// Dev and Ino identify the directory granted: Revoke touches nothing
	// in a directory found at Workspace that is not this one. Zero in a
	// meta.json written before they were recorded: not checked.
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
	// Born is the directory's birth time (ns since the epoch, 0 where the
	// file system does not keep one): an inode number is reused as soon as
	// a directory is deleted, a birth time is not.
	Born int64 `json:"born,omitempty"`
	// LockDir holds the per-workspace lock files; it is under agentbox's
	// run root, never in the workspace, where the agent could hold or
	// replace a lock.
	LockDir string `json:"lock_dir,omitempty"`
	// Method is how the workspace is handed over (GrantACL) and
	// MethodReason why that one (see GrantMethod).
	Method       string `json:"method,omitempty"`
	MethodReason string `json:"method_reason,omitempty"`
}

// GrantReport is what one Apply or Revoke did, for the run's record.
type GrantReport struct {
	Method string `json:"method"`
	// Walked counts the inodes visited.
	Walked int `json:"walked"`
	// GivenBack counts the inodes owned by the agent's ids that were given
	// to the workspace's owner.
	GivenBack int `json:"given_back,omitempty"`
	// AgentACLEntries counts the named ACL entries removed from the
	// agent's inodes besides its own: ones it added, not inherited.
	AgentACLEntries int `json:"agent_acl_entries,omitempty"`
	// SetIDCleared lists the agent's files whose set-uid or set-gid bit
	// was cleared before they were handed back.
	SetIDCleared []string `json:"setid_cleared,omitempty"`
	// Skipped lists entries not walked: mount points, entries replaced
	// while the walk ran, hard links a grant must not follow.
	Skipped []string `json:"skipped,omitempty"`
	// Note says why nothing was done, when nothing was.
	Note string `json:"note,omitempty"`
}

// Summary says in one line what the report holds.
func (r GrantReport) Summary() string {
	if r.Note != "" {
		return r.Note
	}
	s := fmt.Sprintf("%d inode(s) walked, %d given back to the owner, %d set-id bit(s) cleared", r.Walked, r.GivenBack, len(r.SetIDCleared))
	if r.AgentACLEntries > 0 {
		s += fmt.Sprintf(", %d ACL entr(ies) the agent added removed", r.AgentACLEntries)
	}
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf(", %d skipped", len(r.Skipped))
	}
	return s
}

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
		Dev: st.Dev, Ino: st.Ino, Born: birth(fd), LockDir: lockDir, Method: GrantACL,
	}, nil
}

// Apply grants g.UID rwX on every directory and regular file of the
// workspace. Symlinks, special files, other mounts and entries replaced
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
	w.run(fd, st)
	rep.Walked, rep.Skipped = w.nodes, w.skipped.lines()
	if err := w.err(); err != nil {
		return rep, fmt.Errorf("grant %s: %w", g.Workspace, err)
	}
	return rep, nil
}

func (g *Grant) method() string {
	if g.Method == "" {
		return GrantACL
	}
	return g.Method
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

// errNotGranted says the workspace found is not the directory granted.
var errNotGranted = errors.New("not the directory that was granted")

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
