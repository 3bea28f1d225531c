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
	if err := g.restoreRootMode(fd); err != nil {
		w.errs.add("./: set the workspace's mode back: " + err.Error())
	}
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
// agent, no longer the owner, cannot set a bit again), then the ACLs, then
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
	d := g.dropper(n, agents)
	perm, rebuilt, err := d.drop(xattrAccess)
	if err == nil && n.isDir() {
		_, _, err = d.drop(xattrDefault)
	}
	rep.AgentACLEntries += d.foreign
	if err != nil {
		return err
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

// aclDropper takes the grant out of one node's ACLs. On an inode of the
// agent's, everything in its ACLs is the agent's doing except what it
// inherited: a named entry is kept only where the parent directory's
// default ACL (already without the agent) has it, at no more than that
// permission, so that no setfacl of the agent's (user:SOMEONE:rwx on a
// script, a default entry on a directory) outlives the run.
type aclDropper struct {
	fd      int
	uid     uint32
	inherit []aclEntry // nil: keep every entry but the agent's
	foreign int        // named entries removed besides the agent's own
}

func (g *Grant) dropper(n *node, agents bool) *aclDropper {
	d := &aclDropper{fd: n.fd, uid: g.UID}
	if !agents || n.parent < 0 {
		return d // the workspace itself was there before the agent
	}
	d.inherit = []aclEntry{}
	if raw, err := fgetxattr(n.parent, xattrDefault); err == nil && raw != nil {
		if acl, err := parseACL(raw); err == nil {
			d.inherit = withoutUser(acl, g.UID)
		}
	}
	return d
}

// keep returns the entries of acl that stay.
func (d *aclDropper) keep(acl []aclEntry) []aclEntry {
	kept := withoutUser(acl, d.uid)
	if d.inherit == nil {
		return kept
	}
	out := kept[:0]
	for _, e := range kept {
		if e.tag != aclUser && e.tag != aclGroup {
			out = append(out, e)
			continue
		}
		if p, ok := namedPerm(d.inherit, e.tag, e.id); ok {
			out = append(out, aclEntry{e.tag, e.perm & p, e.id})
			continue
		}
		d.foreign++
	}
	return out
}

// maskWithin limits acl's mask to the one old had: a revoke never widens
// what the group class gets (the agent may have narrowed it with chmod).
func maskWithin(acl, old []aclEntry) []aclEntry {
	limit, ok := namedPerm(old, aclMask, aclNoID)
	if !ok {
		return acl
	}
	for i := range acl {
		if acl[i].tag == aclMask {
			acl[i].perm &= limit
		}
	}
	return acl
}

func namedPerm(acl []aclEntry, tag uint16, id uint32) (uint16, bool) {
	for _, e := range acl {
		if e.tag == tag && e.id == id {
			return e.perm, true
		}
	}
	return 0, false
}

// drop rewrites xattr name without what keep leaves out. When what is
// left is minimal the xattr is removed; for the access ACL, rebuilt then
// reports that the mode's permission bits must become perm.
func (d *aclDropper) drop(name string) (perm uint32, rebuilt bool, err error) {
	raw, err := fgetxattr(d.fd, name)
	if err != nil || raw == nil {
		return 0, false, err
	}
	acl, err := parseACL(raw)
	if err != nil {
		return 0, false, err
	}
	kept := d.keep(append([]aclEntry{}, acl...))
	if !minimal(kept) {
		if len(kept) == len(acl) && d.inherit == nil {
			return 0, false, nil // not ours: left as it is
		}
		return 0, false, writeACL(d.fd, name, maskWithin(withMask(kept), acl))
	}
	if err := unix.Fremovexattr(d.fd, name); err != nil && !errors.Is(err, unix.ENODATA) {
		return 0, false, err
	}
	return permFromACL(kept), name == xattrAccess, nil
}
