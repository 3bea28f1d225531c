package account

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// Perm is a set of access bits: Read 4, Write 2, Exec 1 (search, for a
// directory).
type Perm uint16

// The access bits.
const (
	Exec  Perm = 1
	Write Perm = 2
	Read  Perm = 4
)

// String renders p as rwx with dashes.
func (p Perm) String() string {
	b := []byte("---")
	for i, bit := range []Perm{Read, Write, Exec} {
		if p&bit != 0 {
			b[i] = "rwx"[i]
		}
	}
	return string(b)
}

// ErrNotSupported is returned where this OS lacks what a fact needs.
var ErrNotSupported = errors.New("not supported on this OS")

// Meta is what decides access to one file: owner, group, mode, access
// ACL (nil for none) and, on macOS, the extended ACL (nil for none).
type Meta struct {
	UID, GID int
	Mode     fs.FileMode
	ACL      []ACLEntry
	Ext      []ExtACE
}

// Grant says whether the account has the wanted access to one file and by
// which entry: "owner", "other (mode 0644)", "group adm (mode 0640)",
// "ACL user:1001:r-x", "ACL group:27:r--", or why not.
type Grant struct {
	OK  bool
	Why string
	// Undecided says the facts could not decide (Why says what is
	// missing): Reach makes it Unknown, never No.
	Undecided bool
}

// Allowed decides as the kernel's permission check does (fs/namei.c
// acl_permission_check, fs/posix_acl.c posix_acl_permission) whether a holds
// want on a file with m. uid 0 reads and searches everything. A macOS
// extended ACL is evaluated first (aclext.go); what it leaves undecided
// falls to the mode bits.
func Allowed(a Account, m Meta, want Perm) Grant {
	if a.UID == 0 {
		return Grant{OK: true, Why: "uid 0 (CAP_DAC_OVERRIDE)"}
	}
	if m.Ext == nil {
		return allowedPOSIX(a, m, want)
	}
	g, rest, decided, err := extAllowed(a, m.Ext, want)
	switch {
	case err != nil:
		return Grant{Why: err.Error(), Undecided: true}
	case decided:
		return g
	}
	p := allowedPOSIX(a, m, rest)
	if g.Why != "" {
		p.Why = g.Why + "; then " + p.Why
	}
	return p
}

func allowedPOSIX(a Account, m Meta, want Perm) Grant {
	perm := Perm(m.Mode.Perm())
	switch {
	case a.UID == m.UID:
		return grant(perm>>6&7, want, "owner")
	case m.ACL != nil:
		return aclAllowed(a, m, want)
	case a.InGroup(m.GID):
		return grant(perm>>3&7, want, fmt.Sprintf("group %s (mode %04o)", a.groupName(m.GID), perm))
	}
	return grant(perm&7, want, fmt.Sprintf("other (mode %04o)", perm))
}

func grant(have, want Perm, why string) Grant {
	if have&want == want {
		return Grant{OK: true, Why: why}
	}
	return Grant{Why: why + " lacks " + want.String()}
}

// aclAllowed is posix_acl_permission: a named user entry, else any matching
// group entry (owning or named) that grants want, masked; else other.
func aclAllowed(a Account, m Meta, want Perm) Grant {
	mask := Perm(7)
	for _, e := range m.ACL {
		if e.Tag == TagMask {
			mask = e.Perm
		}
	}
	for _, e := range m.ACL {
		if e.Tag == TagUser && e.ID == a.UID {
			return grant(e.Perm&mask, want, "ACL "+e.String())
		}
	}
	found := ""
	for _, e := range m.ACL {
		gid := e.ID
		if e.Tag == TagGroupObj {
			gid = m.GID
		}
		if (e.Tag == TagGroupObj || e.Tag == TagGroup) && a.InGroup(gid) {
			if e.Perm&mask&want == want {
				return Grant{OK: true, Why: fmt.Sprintf("ACL %s (group %s)", e, a.groupName(gid))}
			}
			found = "ACL " + e.String()
		}
	}
	if found != "" {
		return Grant{Why: found + " lacks " + want.String()}
	}
	for _, e := range m.ACL {
		if e.Tag == TagOther {
			return grant(e.Perm, want, "ACL "+e.String())
		}
	}
	return Grant{Why: "ACL without an other entry"}
}

func (a Account) groupName(gid int) string {
	for _, g := range a.Groups {
		if g.GID == gid && g.Name != "" {
			return g.Name
		}
	}
	return fmt.Sprint(gid)
}

// FS reads the facts of files. Host is the running system's.
type FS interface {
	Lstat(p string) (Meta, error)
	Readlink(p string) (string, error)
}

// Host is the FS of this machine: lstat(2) and the system.posix_acl_access
// xattr.
var Host FS = hostFS{}

type hostFS struct{}

func (hostFS) Lstat(p string) (Meta, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return Meta{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Meta{}, fmt.Errorf("lstat %s: %w", p, ErrNotSupported)
	}
	m := Meta{UID: int(st.Uid), GID: int(st.Gid), Mode: fi.Mode()}
	if fi.Mode()&fs.ModeSymlink == 0 {
		if m.ACL, err = readACL(p); err != nil {
			return Meta{}, err
		}
		if m.Ext, err = readExtACL(p); err != nil {
			return Meta{}, err
		}
	}
	return m, nil
}

func (hostFS) Readlink(p string) (string, error) { return os.Readlink(p) }

// Access is the answer to "can the account reach this file with this
// access": Allowed is Yes, No or Unknown, Path the file reached after
// symlinks, Why the entry that granted the last step or the step that
// refused.
type Access struct {
	Allowed string `json:"allowed"`
	Path    string `json:"path"`
	Why     string `json:"why"`
}

// The values of Access.Allowed.
const (
	Yes     = "yes"
	No      = "no"
	Unknown = "unknown"
)

// maxLinks bounds symlink resolution, as the kernel's 40.
const maxLinks = 40

// Reach decides whether a can open p (absolute) for want: search on every
// directory on the way (following symlinks as open does), then want on the
// file itself. A path that does not exist is No with the reason.
func Reach(fsys FS, a Account, p string, want Perm) Access {
	cur, rest, links := "/", strings.Split(strings.Trim(path.Clean(p), "/"), "/"), 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		if name == "" || name == "." {
			continue
		}
		dir, err := fsys.Lstat(cur)
		if err != nil {
			return failed(cur, err)
		}
		if g := Allowed(a, dir, Exec); !g.OK {
			if g.Undecided {
				return Access{Unknown, cur, "whether it can search " + cur + ": " + g.Why}
			}
			return Access{No, cur, "cannot search " + cur + ": " + g.Why}
		}
		next := path.Join(cur, name)
		if name == ".." {
			cur = path.Dir(cur)
			continue
		}
		m, err := fsys.Lstat(next)
		if err != nil {
			return failed(next, err)
		}
		if m.Mode&fs.ModeSymlink == 0 {
			cur = next
			if len(rest) == 0 {
				return final(a, m, next, want)
			}
			continue
		}
		if links++; links > maxLinks {
			return Access{No, next, "too many levels of symbolic links"}
		}
		target, err := fsys.Readlink(next)
		if err != nil {
			return failed(next, err)
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(strings.Trim(target, "/"), "/"), rest...)
	}
	m, err := fsys.Lstat(cur)
	if err != nil {
		return failed(cur, err)
	}
	return final(a, m, cur, want)
}

func final(a Account, m Meta, p string, want Perm) Access {
	g := Allowed(a, m, want)
	switch {
	case g.OK:
		return Access{Yes, p, g.Why}
	case g.Undecided:
		return Access{Unknown, p, g.Why}
	}
	return Access{No, p, g.Why}
}

func failed(p string, err error) Access {
	if errors.Is(err, fs.ErrNotExist) {
		return Access{No, p, "does not exist"}
	}
	return Access{Unknown, p, err.Error()}
}
