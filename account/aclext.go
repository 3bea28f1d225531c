package account

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// macOS ACLs are extended ACLs (NFSv4-like: ordered allow and deny entries
// naming users and groups), not POSIX ACLs. agentbox reads them without
// cgo through /bin/ls -led, whose output ParseLsACL reads (captured text in
// the tests, never run on a Mac), and decides with them as the kernel's
// kauth_acl_evaluate does (xnu bsd/kern/kern_authorization.c): entries in
// order, an inherit-only entry skipped; a deny entry that names any of
// the requested rights denies; allow entries take rights off what is still
// wanted; what no entry settled falls to the mode bits
// (vnode_authorize_posix).

// ExtACE is one entry of a macOS extended ACL as ls -le prints it:
// " 0: user:_agentbox inherited allow list,search,file_inherit".
type ExtACE struct {
	// Tag is "user" or "group"; Name the user's or group's name.
	Tag, Name string
	// Deny is a deny entry; otherwise it allows.
	Deny bool
	// Inherited marks an entry copied from a parent's inheritable one.
	Inherited bool
	// Rights are the rights and flags, as printed (list, read, search,
	// file_inherit, only_inherit, …).
	Rights []string
}

// String renders e as ls -le prints it, without the index.
func (e ExtACE) String() string {
	kind := "allow"
	if e.Deny {
		kind = "deny"
	}
	inh := ""
	if e.Inherited {
		inh = " inherited"
	}
	return e.Tag + ":" + e.Name + inh + " " + kind + " " + strings.Join(e.Rights, ",")
}

// LsACLArgv lists path's own entry (-d: a directory itself, not its
// contents; a final symlink itself, not its target) with its ACL (-e).
func LsACLArgv(path string) []string { return []string{"/bin/ls", "-led", path} }

// ErrBadExtACL is wrapped by ParseLsACL for output it cannot read.
var ErrBadExtACL = errors.New("unreadable ls -le ACL listing")

var aceLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ *([0-9]+): (.+)$`) })

// ParseLsACL reads ls -led's output for one path: the long line, then, when
// its mode ends in "+", one line per ACL entry. No "+" is no ACL (nil). An
// entry whose identity is not user:NAME or group:NAME (ls prints a bare
// UUID for one it cannot name) is an error: deciding without it could
// be wrong either way.
func ParseLsACL(out string) ([]ExtACE, error) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	mode, _, _ := strings.Cut(lines[0], " ")
	if len(mode) < 10 {
		return nil, fmt.Errorf("%w: first line %q has no mode", ErrBadExtACL, lines[0])
	}
	if !strings.HasSuffix(mode, "+") {
		if len(lines) > 1 {
			return nil, fmt.Errorf("%w: entries listed without the + of an ACL", ErrBadExtACL)
		}
		return nil, nil
	}
	var entries []ExtACE
	for i, line := range lines[1:] {
		m := aceLine().FindStringSubmatch(line)
		if m == nil || m[1] != strconv.Itoa(i) {
			return nil, fmt.Errorf("%w: line %q is not entry %d", ErrBadExtACL, line, i)
		}
		e, err := parseACE(m[2])
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: mode %s says ACL, no entry listed", ErrBadExtACL, mode)
	}
	return entries, nil
}

// parseACE reads "user:NAME [inherited] allow|deny RIGHT,RIGHT…".
func parseACE(s string) (ExtACE, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return ExtACE{}, fmt.Errorf("%w: entry %q", ErrBadExtACL, s)
	}
	var e ExtACE
	e.Rights = strings.Split(f[len(f)-1], ",")
	switch f[len(f)-2] {
	case "allow":
	case "deny":
		e.Deny = true
	default:
		return ExtACE{}, fmt.Errorf("%w: entry %q is neither allow nor deny", ErrBadExtACL, s)
	}
	id := f[:len(f)-2]
	if n := len(id); n > 1 && id[n-1] == "inherited" {
		e.Inherited, id = true, id[:n-1]
	}
	tag, name, ok := strings.Cut(strings.Join(id, " "), ":")
	if !ok || (tag != "user" && tag != "group") || name == "" {
		return ExtACE{}, fmt.Errorf("%w: entry %q names no user or group (an identity ls could not resolve)", ErrBadExtACL, s)
	}
	e.Tag, e.Name = tag, name
	return e, nil
}

// extRights are the rights of an entry that carry each access bit: the
// same kernel right has a directory's name and a file's (list is read,
// add_file is write, search is execute).
var extRights = map[Perm][]string{
	Read:  {"read", "list"},
	Write: {"write", "add_file"},
	Exec:  {"execute", "search"},
}

// bits is the access bits entry e names.
func (e ExtACE) bits() Perm {
	var p Perm
	for bit, names := range extRights {
		if slices.ContainsFunc(e.Rights, func(r string) bool { return slices.Contains(names, r) }) {
			p |= bit
		}
	}
	return p
}

// appliesTo says whether e is one of a's: its user, one of its groups by
// name, or the group everyone (every credential is a member). A group
// entry for a gid of a's without a name is undecidable.
func (e ExtACE) appliesTo(a Account) (bool, error) {
	if e.Tag == "user" {
		return e.Name == a.Name, nil
	}
	if e.Name == "everyone" {
		return true, nil
	}
	for _, g := range a.Groups {
		if g.Name == e.Name {
			return true, nil
		}
		if g.Name == "" {
			return false, fmt.Errorf("the account's group %d has no name to match ACL entry %s", g.GID, e)
		}
	}
	return false, nil
}

// extAllowed evaluates the extended ACL for want. decided says the ACL
// settled it (g is the answer); otherwise rest is what the mode bits must
// still grant, and g.Why says what the ACL gave.
func extAllowed(a Account, acl []ExtACE, want Perm) (g Grant, rest Perm, decided bool, err error) {
	rest = want
	var gave []string
	for _, e := range acl {
		if slices.Contains(e.Rights, "only_inherit") {
			continue
		}
		bits := e.bits()
		if e.Deny && bits&want == 0 || !e.Deny && bits&rest == 0 {
			continue
		}
		ok, err := e.appliesTo(a)
		if err != nil {
			return Grant{}, 0, false, err
		}
		if !ok {
			continue
		}
		if e.Deny {
			return Grant{Why: "ACL " + e.String() + " denies " + (bits & want).String()}, 0, true, nil
		}
		rest &^= bits
		gave = append(gave, "ACL "+e.String())
		if rest == 0 {
			return Grant{OK: true, Why: strings.Join(gave, "; ")}, 0, true, nil
		}
	}
	return Grant{Why: strings.Join(gave, "; ")}, rest, false, nil
}
