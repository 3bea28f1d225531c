package engine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The grant under gVisor (GrantChown). gVisor's Sentry checks every access
// to the workspace itself, against the owner, group and mode bits it reads
// from the host: its gofer file system has no POSIX ACLs (it neither
// evaluates nor sets them), so the ACL grant gives the agent nothing there.
// Instead the workspace's owner lends the agent its inodes for the run:
// every directory and regular file owned by the workspace's owner and
// group gets the agent's host uid and gid, and Revoke, which gives every
// inode of the agent's ids back to the owner, undoes it. Both ids, since
// the Sentry makes the agent's files on the host with its own
// capabilities, which hold in its user namespace only on an inode whose
// owner and group are both mapped there. What the
// lending would change beyond the owner is left alone, reported as
// skipped and not writable by the agent:
//   - a file with more than one link: its other names may be outside the
//     workspace, and an owner may chmod it;
//   - a set-uid or set-gid file, or one with file capabilities
//     (security.capability): chown clears them, and the revoke could not
//     put them back;
//   - an inode with named ACL entries: the revoke takes any entry off an
//     inode of the agent's that its parent's default ACL does not give,
//     so the entries would not survive the run;
//   - an inode of another owner or group: the revoke gives the agent's
//     inodes back to the workspace's owner and group only.
// The agent owns the workspace directory for the run and may chmod it; the
// revoke sets its mode back to the one recorded at the grant (Grant.Mode).

// lender is one chown grant's walk state.
type lender struct {
	g      *Grant
	w      *walker
	rep    *GrantReport
	others int // inodes of another owner, left alone
}

// lendNode gives one node of the workspace's owner to the agent.
func (l *lender) lendNode(n *node) error {
	if !n.hasData() || n.kind() == unix.S_IFIFO {
		return nil // symlinks, sockets, devices, FIFOs: not granted, as under the ACL grant
	}
	if n.st.Uid != l.g.OwnerUID || n.st.Gid != l.g.OwnerGID {
		if n.st.Uid != l.g.UID || n.st.Gid != l.g.GID {
			l.others++
		}
		return nil
	}
	if why, err := l.unlendable(n); err != nil || why != "" {
		if why != "" {
			l.w.skipped.add(l.w.where(n.name) + ": " + why + ": not lent to the agent")
		}
		return err
	}
	if err := unix.Fchownat(n.fd, "", int(l.g.UID), int(l.g.GID), unix.AT_EMPTY_PATH); err != nil {
		return err
	}
	l.rep.Lent++
	return nil
}

// unlendable says why n must keep its owner ("" when it may be lent).
func (l *lender) unlendable(n *node) (string, error) {
	if !n.isDir() {
		switch {
		case n.st.Nlink > 1:
			return fmt.Sprintf("has %d hard links", n.st.Nlink), nil
		case n.st.Mode&setID != 0:
			return fmt.Sprintf("is set-uid or set-gid (mode %04o)", n.st.Mode&0o7777), nil
		}
		caps, err := fgetxattrAny(n.fd, "security.capability")
		if err != nil || caps {
			return "has file capabilities", err
		}
	}
	for _, name := range []string{xattrAccess, xattrDefault} {
		if name == xattrDefault && !n.isDir() {
			continue
		}
		raw, err := fgetxattr(n.fd, name)
		if err != nil {
			return "", err
		}
		if raw == nil {
			continue
		}
		acl, err := parseACL(raw)
		if err != nil {
			return "", err
		}
		for _, e := range acl {
			if e.tag == aclUser || e.tag == aclGroup {
				return "has named ACL entries (" + name + ")", nil
			}
		}
	}
	return "", nil
}

// fgetxattrAny reports whether fd carries xattr name.
func fgetxattrAny(fd int, name string) (bool, error) {
	_, err := unix.Fgetxattr(fd, name, nil)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENODATA), errors.Is(err, unix.EOPNOTSUPP):
		return false, nil
	}
	return false, err
}

// done reports the inodes of other owners, in one line.
func (l *lender) done() {
	if l.others > 0 {
		l.w.skipped.add(fmt.Sprintf("%d inode(s) owned by neither the workspace's owner and group (%d:%d) nor the agent: not lent to the agent", l.others, l.g.OwnerUID, l.g.OwnerGID))
	}
}

// restoreRootMode sets the workspace directory's mode back to the one it
// had at a chown grant: the agent owned it for the run.
func (g *Grant) restoreRootMode(fd int) error {
	if g.method() != GrantChown || g.Mode == 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&0o7777 == g.Mode&0o7777 {
		return nil
	}
	return unix.Fchmod(fd, g.Mode&0o7777)
}
