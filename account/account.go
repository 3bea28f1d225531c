// Package account holds the facts about a dedicated user account that the
// agent would run as, and the artifacts that create and fence one: who the
// account is (uid, groups, home, read from /etc/passwd and /etc/group), what
// it can read of everyone else's files (decided from modes, owners, groups,
// POSIX ACLs on Linux and extended ACLs on macOS, never by trying as root),
// its sudo rights (parsed from sudoers, never by running sudo), the
// variables its shell profiles set, the commands `agentbox setup-user` runs (useradd on Linux, dscl on macOS), and
// the macOS pf anchor and Seatbelt profile the macOS engine loads.
//
// Security-relevant defaults, and how to override them:
//
//   - Access is decided for the account's credentials as a login gives them:
//     its uid, its primary gid and every group of /etc/group that lists it.
//     Only discretionary access is modelled (mode bits and ACLs); an LSM that
//     denies more is not credited. A path whose facts cannot be read (an
//     unreadable ACL, a vanished component) is Unknown, never "unreadable".
//   - The sudoers files are read from Paths.Sudoers (default /etc/sudoers)
//     and the files it includes; nothing is executed.
//   - Everything under this package that talks about macOS (DarwinPlan,
//     PFAnchor, Seatbelt) is a pure renderer: it has golden files here and
//     has not been run on a Mac by these tests.
package account

import (
	"errors"
	"fmt"
	"sort"

	"github.com/moby/sys/user"
)

// Paths are the host files the facts are read from. The zero value means the
// system's: /etc/passwd, /etc/group and /etc/sudoers.
type Paths struct {
	Passwd, Group, Sudoers string
}

func (p Paths) orDefault() Paths {
	if p.Passwd == "" {
		p.Passwd = "/etc/passwd"
	}
	if p.Group == "" {
		p.Group = "/etc/group"
	}
	if p.Sudoers == "" {
		p.Sudoers = "/etc/sudoers"
	}
	return p
}

// Group is one group the account belongs to.
type Group struct {
	Name string `json:"name"`
	GID  int    `json:"gid"`
	// Primary is true for the passwd entry's group.
	Primary bool `json:"primary,omitempty"`
}

// Account is one user account as a login would set up its credentials.
type Account struct {
	Name  string `json:"name"`
	UID   int    `json:"uid"`
	GID   int    `json:"gid"`
	Home  string `json:"home"`
	Shell string `json:"shell"`
	// Groups are the primary group and every supplementary group, sorted by
	// gid.
	Groups []Group `json:"groups"`
}

// ErrNoAccount is returned by Lookup for a name that has no passwd entry.
var ErrNoAccount = errors.New("no such account")

// Lookup reads the account name from the passwd and group files.
func Lookup(name string, p Paths) (Account, error) {
	p = p.orDefault()
	us, err := user.ParsePasswdFileFilter(p.Passwd, func(u user.User) bool { return u.Name == name })
	if err != nil {
		return Account{}, fmt.Errorf("read %s: %w", p.Passwd, err)
	}
	if len(us) == 0 {
		return Account{}, fmt.Errorf("account %q: %w in %s (create it with 'agentbox setup-user' or useradd)", name, ErrNoAccount, p.Passwd)
	}
	u := us[0]
	a := Account{Name: u.Name, UID: u.Uid, GID: u.Gid, Home: u.Home, Shell: u.Shell}
	gs, err := user.ParseGroupFileFilter(p.Group, func(g user.Group) bool { return g.Gid == u.Gid || contains(g.List, name) })
	if err != nil {
		return Account{}, fmt.Errorf("read %s: %w", p.Group, err)
	}
	a.Groups = groupsOf(u, gs)
	return a, nil
}

// groupsOf is the primary group (named "" when /etc/group lacks it) and the
// supplementary groups, once each, sorted by gid.
func groupsOf(u user.User, gs []user.Group) []Group {
	seen := map[int]bool{}
	var out []Group
	for _, g := range gs {
		if seen[g.Gid] {
			continue
		}
		seen[g.Gid] = true
		out = append(out, Group{Name: g.Name, GID: g.Gid, Primary: g.Gid == u.Gid})
	}
	if !seen[u.Gid] {
		out = append(out, Group{GID: u.Gid, Primary: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GID < out[j].GID })
	return out
}

// InGroup reports whether gid is one of the account's groups.
func (a Account) InGroup(gid int) bool {
	for _, g := range a.Groups {
		if g.GID == gid {
			return true
		}
	}
	return false
}

// GroupNames are the names of the account's groups that have one.
func (a Account) GroupNames() []string {
	var out []string
	for _, g := range a.Groups {
		if g.Name != "" {
			out = append(out, g.Name)
		}
	}
	return out
}

// Users lists every passwd entry (name, uid, home), for the audit's choice
// of homes to check.
func Users(p Paths) ([]user.User, error) {
	p = p.orDefault()
	us, err := user.ParsePasswdFile(p.Passwd)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.Passwd, err)
	}
	return us, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isNoAccount(err error) bool { return errors.Is(err, ErrNoAccount) }

// groupByName reports whether the group file has a group called name.
func groupByName(file, name string) (bool, error) {
	gs, err := user.ParseGroupFileFilter(file, func(g user.Group) bool { return g.Name == name })
	if err != nil {
		return false, fmt.Errorf("read %s: %w", file, err)
	}
	return len(gs) > 0, nil
}
