//go:build linux

package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"golang.org/x/sys/unix"
)

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

// readACL reads an ACL xattr through fd, or synthesizes the minimal ACL of
// mode when there is none.
func readACL(fd int, name string, mode uint32) ([]aclEntry, error) {
	raw, err := fgetxattr(fd, name)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		p := uint16(mode & 0o777)
		return []aclEntry{{aclUserObj, p >> 6 & 7, aclNoID}, {aclGroupObj, p >> 3 & 7, aclNoID}, {aclOther, p & 7, aclNoID}}, nil
	}
	return parseACL(raw)
}

// fgetxattr reads xattr name through fd; nil when it is not set.
func fgetxattr(fd int, name string) ([]byte, error) {
	buf := make([]byte, 1024)
	for {
		n, err := unix.Fgetxattr(fd, name, buf)
		switch {
		case errors.Is(err, unix.ENODATA):
			return nil, nil
		case errors.Is(err, unix.ERANGE) && len(buf) < 1<<20:
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

// writeACL sets xattr name through fd to acl.
func writeACL(fd int, name string, acl []aclEntry) error {
	return unix.Fsetxattr(fd, name, encodeACL(acl), 0)
}

func encodeACL(acl []aclEntry) []byte {
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
	return raw
}

// withUser sets uid's entry to perm and recomputes the mask.
func withUser(acl []aclEntry, uid uint32, perm uint16) []aclEntry {
	return withMask(append(withoutUser(acl, uid), aclEntry{aclUser, perm, uid}))
}

// withoutUser returns acl without uid's named entry.
func withoutUser(acl []aclEntry, uid uint32) []aclEntry {
	out := make([]aclEntry, 0, len(acl)+2)
	for _, e := range acl {
		if !(e.tag == aclUser && e.id == uid) {
			out = append(out, e)
		}
	}
	return out
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

// permFromACL is the permission bits a minimal ACL stands for. The group
// class gets what it effectively had, group_obj limited by the mask: a
// file the agent chmod'ed to 0745 under an inherited group::r-x keeps
// group r--, not the r-x that group_obj alone would give back.
func permFromACL(acl []aclEntry) uint32 {
	var user, group, other, mask uint16 = 0, 0, 0, 7
	for _, e := range acl {
		switch e.tag {
		case aclUserObj:
			user = e.perm
		case aclGroupObj:
			group = e.perm
		case aclOther:
			other = e.perm
		case aclMask:
			mask = e.perm
		}
	}
	return uint32(user&7)<<6 | uint32(group&mask&7)<<3 | uint32(other&7)
}
