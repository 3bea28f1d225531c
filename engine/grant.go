package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// Grant gives one host uid access to a workspace tree for the duration of a
// run, through POSIX ACLs. It is how a root-owned workspace is handed to an
// agent that must not be root on the host: the agent's host uid gets rwX
// (and the same as default ACL on directories, so new files inherit it),
// and Revoke takes it back and gives the agent's new files to the owner.
type Grant struct {
	Workspace string `json:"workspace"`
	UID       uint32 `json:"uid"`       // the agent's host uid
	GID       uint32 `json:"gid"`       // the agent's host gid
	OwnerUID  uint32 `json:"owner_uid"` // who the agent's files go back to
	OwnerGID  uint32 `json:"owner_gid"`
}

// ACL tags and the xattr format of linux/posix_acl_xattr.h.
const (
	aclUserObj   = 0x01
	aclUser      = 0x02
	aclGroupObj  = 0x04
	aclGroup     = 0x08
	aclMask      = 0x10
	aclOther     = 0x20
	aclVersion   = 2
	aclNoID      = 0xffffffff
	xattrAccess  = "system.posix_acl_access"
	xattrDefault = "system.posix_acl_default"
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// Apply grants g.UID rwX on every directory and regular file of the
// workspace (symlinks are never followed).
func (g *Grant) Apply() error {
	return filepath.WalkDir(g.Workspace, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() && !d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := g.addAccess(path, fi.Mode()); err != nil {
			return fmt.Errorf("grant %s: %w", path, err)
		}
		if d.IsDir() {
			return g.addDefault(path, fi.Mode())
		}
		return nil
	})
}

func (g *Grant) addAccess(path string, mode fs.FileMode) error {
	acl, err := readACL(path, xattrAccess, mode)
	if err != nil {
		return err
	}
	perm := uint16(6)
	if mode.IsDir() || mode&0o100 != 0 {
		perm = 7
	}
	return writeACL(path, xattrAccess, withUser(acl, g.UID, perm))
}

func (g *Grant) addDefault(path string, mode fs.FileMode) error {
	acl, err := readACL(path, xattrDefault, mode)
	if err != nil {
		return err
	}
	return writeACL(path, xattrDefault, withUser(acl, g.UID, 7))
}

// Revoke removes g.UID's ACL entries from the tree and gives files the
// agent created (owned by its host ids) back to the workspace's owner.
// Where only the owner/group/other entries remain, the ACL is removed and
// the mode bits restored from it, so the tree ends as it began.
func (g *Grant) Revoke() error {
	var errs []error
	_ = filepath.WalkDir(g.Workspace, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if err := g.revokeOne(path, d); err != nil {
			errs = append(errs, fmt.Errorf("revoke %s: %w", path, err))
		}
		return nil
	})
	return errors.Join(errs...)
}

func (g *Grant) revokeOne(path string, d fs.DirEntry) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	if st.Uid == g.UID || st.Gid == g.GID {
		uid, gid := int(st.Uid), int(st.Gid)
		if st.Uid == g.UID {
			uid = int(g.OwnerUID)
		}
		if st.Gid == g.GID {
			gid = int(g.OwnerGID)
		}
		if err := os.Lchown(path, uid, gid); err != nil {
			return err
		}
	}
	if !d.Type().IsRegular() && !d.IsDir() {
		return nil
	}
	if err := g.dropUser(path, xattrAccess); err != nil {
		return err
	}
	if d.IsDir() {
		return g.dropUser(path, xattrDefault)
	}
	return nil
}

func (g *Grant) dropUser(path, name string) error {
	raw, err := getxattr(path, name)
	if err != nil || raw == nil {
		return err
	}
	acl, err := parseACL(raw)
	if err != nil {
		return err
	}
	kept := acl[:0]
	for _, e := range acl {
		if !(e.tag == aclUser && e.id == g.UID) {
			kept = append(kept, e)
		}
	}
	if !minimal(kept) {
		return writeACL(path, name, withMask(kept))
	}
	if err := unix.Lremovexattr(path, name); err != nil {
		return err
	}
	if name == xattrDefault {
		return nil
	}
	return restoreMode(path, kept)
}

// restoreMode sets the permission bits from a minimal ACL, keeping the
// setuid, setgid and sticky bits.
func restoreMode(path string, acl []aclEntry) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	mode := st.Mode & 0o7000
	for _, e := range acl {
		switch e.tag {
		case aclUserObj:
			mode |= uint32(e.perm) << 6
		case aclGroupObj:
			mode |= uint32(e.perm) << 3
		case aclOther:
			mode |= uint32(e.perm)
		}
	}
	return unix.Chmod(path, mode)
}

// readACL reads an ACL xattr, or synthesizes the minimal ACL of mode.
func readACL(path, name string, mode fs.FileMode) ([]aclEntry, error) {
	raw, err := getxattr(path, name)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		p := mode.Perm()
		return []aclEntry{{aclUserObj, uint16(p>>6) & 7, aclNoID}, {aclGroupObj, uint16(p>>3) & 7, aclNoID}, {aclOther, uint16(p) & 7, aclNoID}}, nil
	}
	return parseACL(raw)
}

func getxattr(path, name string) ([]byte, error) {
	buf := make([]byte, 1024)
	for {
		n, err := unix.Lgetxattr(path, name, buf)
		switch {
		case errors.Is(err, unix.ENODATA):
			return nil, nil
		case errors.Is(err, unix.ERANGE):
			buf = make([]byte, len(buf)*4)
			continue
		case errors.Is(err, unix.EOPNOTSUPP):
			return nil, fmt.Errorf("the workspace's file system does not support ACLs: %w", err)
		case err != nil:
			return nil, err
		}
		return buf[:n], nil
	}
}

func parseACL(raw []byte) ([]aclEntry, error) {
	if len(raw) < 4 || binary.LittleEndian.Uint32(raw) != aclVersion || (len(raw)-4)%8 != 0 {
		return nil, errors.New("malformed ACL xattr")
	}
	var out []aclEntry
	for b := raw[4:]; len(b) >= 8; b = b[8:] {
		out = append(out, aclEntry{binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]), binary.LittleEndian.Uint32(b[4:])})
	}
	return out, nil
}

func writeACL(path, name string, acl []aclEntry) error {
	sort.Slice(acl, func(i, j int) bool {
		if acl[i].tag != acl[j].tag {
			return acl[i].tag < acl[j].tag
		}
		return acl[i].id < acl[j].id
	})
	raw := binary.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range acl {
		raw = binary.LittleEndian.AppendUint16(raw, e.tag)
		raw = binary.LittleEndian.AppendUint16(raw, e.perm)
		raw = binary.LittleEndian.AppendUint32(raw, e.id)
	}
	return unix.Lsetxattr(path, name, raw, 0)
}

// withUser sets uid's entry to perm and recomputes the mask.
func withUser(acl []aclEntry, uid uint32, perm uint16) []aclEntry {
	out := make([]aclEntry, 0, len(acl)+2)
	for _, e := range acl {
		if !(e.tag == aclUser && e.id == uid) {
			out = append(out, e)
		}
	}
	return withMask(append(out, aclEntry{aclUser, perm, uid}))
}

// withMask sets the mask to the union of the group class, as setfacl does.
func withMask(acl []aclEntry) []aclEntry {
	var mask uint16
	out := make([]aclEntry, 0, len(acl)+1)
	for _, e := range acl {
		switch e.tag {
		case aclMask:
			continue
		case aclUser, aclGroup, aclGroupObj:
			mask |= e.perm
		}
		out = append(out, e)
	}
	return append(out, aclEntry{aclMask, mask, aclNoID})
}

// minimal reports whether acl has no named user or group entries.
func minimal(acl []aclEntry) bool {
	for _, e := range acl {
		if e.tag == aclUser || e.tag == aclGroup {
			return false
		}
	}
	return true
}
