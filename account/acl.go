package account

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ACL tags, as the Linux xattr system.posix_acl_access stores them
// (include/uapi/linux/posix_acl.h).
const (
	TagUserObj  = 0x01
	TagUser     = 0x02
	TagGroupObj = 0x04
	TagGroup    = 0x08
	TagMask     = 0x10
	TagOther    = 0x20
)

// aclVersion is the only xattr ACL version Linux writes.
const aclVersion = 2

// ACLEntry is one entry of a POSIX access ACL. ID is the uid or gid of a
// named user or group entry (TagUser, TagGroup); Perm holds r=4, w=2, x=1.
type ACLEntry struct {
	Tag  uint16 `json:"tag"`
	Perm Perm   `json:"perm"`
	ID   int    `json:"id,omitempty"`
}

// String renders the entry as getfacl does (user:1001:r--), ids numeric.
func (e ACLEntry) String() string {
	switch e.Tag {
	case TagUserObj:
		return "user::" + e.Perm.String()
	case TagUser:
		return fmt.Sprintf("user:%d:%s", e.ID, e.Perm)
	case TagGroupObj:
		return "group::" + e.Perm.String()
	case TagGroup:
		return fmt.Sprintf("group:%d:%s", e.ID, e.Perm)
	case TagMask:
		return "mask::" + e.Perm.String()
	case TagOther:
		return "other::" + e.Perm.String()
	}
	return fmt.Sprintf("tag%#x:%s", e.Tag, e.Perm)
}

// ErrBadACL is wrapped by ParseACL for bytes that are no POSIX ACL.
var ErrBadACL = errors.New("malformed POSIX ACL xattr")

// ParseACL decodes the value of the system.posix_acl_access xattr: a
// little-endian u32 version (2), then entries of u16 tag, u16 perm, u32 id.
func ParseACL(b []byte) ([]ACLEntry, error) {
	if len(b) < 4 || (len(b)-4)%8 != 0 {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadACL, len(b))
	}
	if v := binary.LittleEndian.Uint32(b); v != aclVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadACL, v, aclVersion)
	}
	var out []ACLEntry
	for p := 4; p < len(b); p += 8 {
		e := ACLEntry{
			Tag:  binary.LittleEndian.Uint16(b[p:]),
			Perm: Perm(binary.LittleEndian.Uint16(b[p+2:]) & 7),
		}
		if e.Tag == TagUser || e.Tag == TagGroup {
			e.ID = int(binary.LittleEndian.Uint32(b[p+4:]))
		}
		out = append(out, e)
	}
	return out, nil
}

// EncodeACL is ParseACL's inverse, for tests and fixtures.
func EncodeACL(es []ACLEntry) []byte {
	b := binary.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range es {
		b = binary.LittleEndian.AppendUint16(b, e.Tag)
		b = binary.LittleEndian.AppendUint16(b, uint16(e.Perm))
		id := uint32(0xffffffff) // ACL_UNDEFINED_ID
		if e.Tag == TagUser || e.Tag == TagGroup {
			id = uint32(e.ID) //nolint:gosec // ids fit in 32 bits
		}
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	return b
}
