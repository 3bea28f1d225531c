package engine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// setID is the set-uid and set-gid bits, never handed back on the agent's
// files.
const setID = unix.S_ISUID | unix.S_ISGID

// Revoke removes g.UID's ACL entries from the tree and gives the inodes
// owned by the agent's host ids back to the workspace's owner, clearing
// set-uid and set-gid on every such non-directory. Where only the
// owner/group/other entries remain, the ACL is removed and the mode bits
// rebuilt from it, the group class through the mask, so the tree ends as
// it began. It walks the whole tree whatever fails, and returns every
// failure; a workspace that is gone or was replaced has nothing to revoke,
// which the report says.
func (g *Grant) Revoke() (GrantReport, error) {
	rep := GrantReport{Method: g.method()}
	fd, st, err := g.open()
	if note := nothingToRevoke(g.Workspace, err); note != "" {
		rep.Note = note
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("revoke %s: %w", g.Workspace, err)
	}
	defer unix.Close(fd)
	unlock, err := g.lock(&st)
	if err != nil {
		return rep, err
	}
	defer unlock()
	var setid list
	w := &walker{openFiles: true}
	w.visit = func(n *node) error { return g.revokeNode(n, &rep, &setid, w) }
	w.run(fd, st)
	rep.Walked, rep.Skipped, rep.SetIDCleared = w.nodes, w.skipped.lines(), setid.lines()
	if err := w.err(); err != nil {
		return rep, fmt.Errorf("revoke %s: %w", g.Workspace, err)
	}
	return rep, nil
}

// nothingToRevoke says why err means there is no grant left to take back:
// the workspace is gone, or what is at its path now is not the directory
// that was granted. "" for any other error.
func nothingToRevoke(ws string, err error) string {
	switch {
	case errors.Is(err, unix.ENOENT):
		return "workspace " + ws + " no longer exists: nothing to revoke"
	case errors.Is(err, errNotGranted), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		return "workspace " + ws + " was replaced since the grant (" + err.Error() + "): nothing revoked there"
	}
	return ""
}

// revokeNode takes the grant back from one node: ownership first (so the
// agent, no longer the owner, cannot set a bit again), then the ACL, then
// the mode.
func (g *Grant) revokeNode(n *node, rep *GrantReport, setid *list, w *walker) error {
	before := n.st.Mode
	agents := n.st.Uid == g.UID || n.st.Gid == g.GID
	if agents {
		if err := g.giveBack(n); err != nil {
			return err
		}
		rep.GivenBack++
	}
	if !n.hasData() {
		return nil // symlinks, sockets, devices: ownership only
	}
	perm, rebuilt, err := g.dropAccess(n.fd)
	if err != nil {
		return err
	}
	if n.isDir() {
		if err := g.dropDefault(n.fd); err != nil {
			return err
		}
	}
	if err := unix.Fstat(n.fd, &n.st); err != nil {
		return err
	}
	mode := n.st.Mode & 0o7777
	if rebuilt {
		mode = mode&0o7000 | perm
	}
	if agents && !n.isDir() {
		mode &^= setID
		if before&setID != 0 {
			setid.add(fmt.Sprintf("%s (mode %04o, now %04o)", w.where(n.name), before&0o7777, mode))
		}
	}
	if mode == n.st.Mode&0o7777 {
		return nil
	}
	return unix.Fchmod(n.fd, mode)
}

// giveBack hands an inode of the agent's ids to the workspace's owner,
// through its own fd (for a symlink, the link itself).
func (g *Grant) giveBack(n *node) error {
	uid, gid := int(n.st.Uid), int(n.st.Gid)
	if n.st.Uid == g.UID {
		uid = int(g.OwnerUID)
	}
	if n.st.Gid == g.GID {
		gid = int(g.OwnerGID)
	}
	return unix.Fchownat(n.fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
}

// dropAccess removes g.UID from the access ACL. When the ACL is then
// minimal it is removed, and rebuilt reports that the mode's permission
// bits must become perm.
func (g *Grant) dropAccess(fd int) (perm uint32, rebuilt bool, err error) {
	raw, err := fgetxattr(fd, xattrAccess)
	if err != nil || raw == nil {
		return 0, false, err
	}
	acl, err := parseACL(raw)
	if err != nil {
		return 0, false, err
	}
	kept := withoutUser(acl, g.UID)
	if !minimal(kept) {
		if len(kept) == len(acl) {
			return 0, false, nil // not ours: left as it is
		}
		return 0, false, writeACL(fd, xattrAccess, withMask(kept))
	}
	if err := unix.Fremovexattr(fd, xattrAccess); err != nil && !errors.Is(err, unix.ENODATA) {
		return 0, false, err
	}
	return permFromACL(kept), true, nil
}

// dropDefault removes g.UID from a directory's default ACL, and the
// default ACL itself when nothing else is left in it.
func (g *Grant) dropDefault(fd int) error {
	raw, err := fgetxattr(fd, xattrDefault)
	if err != nil || raw == nil {
		return err
	}
	acl, err := parseACL(raw)
	if err != nil {
		return err
	}
	kept := withoutUser(acl, g.UID)
	switch {
	case minimal(kept):
		if err := unix.Fremovexattr(fd, xattrDefault); err != nil && !errors.Is(err, unix.ENODATA) {
			return err
		}
		return nil
	case len(kept) == len(acl):
		return nil
	}
	return writeACL(fd, xattrDefault, withMask(kept))
}
