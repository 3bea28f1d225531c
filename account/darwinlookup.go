package account

import (
	"bufio"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// On macOS the accounts live in Directory Services, not in /etc/passwd
// (which lists only a few for single-user mode), so Lookup cannot find
// _agentbox there: LookupDarwin asks dscl and id instead. The argvs and
// parsers are pure and tested on Linux; darwinlookup_darwin.go runs them
// (never run on a Mac).

// DarwinReadArgv reads the account's record: dscl . -read /Users/NAME
// with the attributes an Account needs.
func DarwinReadArgv(name string) []string {
	return []string{"/usr/bin/dscl", ".", "-read", "/Users/" + name, "UniqueID", "PrimaryGroupID", "NFSHomeDirectory", "UserShell"}
}

// DarwinGroupsArgv lists the ids of every group the account is in, as the
// kernel will see them after sudo's initgroups.
func DarwinGroupsArgv(name string) []string { return []string{"/usr/bin/id", "-G", name} }

// DarwinGroupNamesArgv lists the same groups by name, in the same order:
// the extended ACLs ls prints name their groups.
func DarwinGroupNamesArgv(name string) []string { return []string{"/usr/bin/id", "-Gn", name} }

// NameGroups gives a's groups the names of id -Gn's output, which lists
// the groups of id -G's output gids in the same order. Output of another
// length names none, which leaves group ACL entries undecidable.
func NameGroups(a Account, gids, names string) (Account, error) {
	ids, ns := strings.Fields(gids), strings.Fields(names)
	if len(ids) != len(ns) {
		return a, fmt.Errorf("id -G lists %d groups and id -Gn %d", len(ids), len(ns))
	}
	byID := map[int]string{}
	for i, f := range ids {
		g, err := strconv.Atoi(f)
		if err != nil {
			return a, fmt.Errorf("id -G %s: %q is not a gid", a.Name, f)
		}
		byID[g] = ns[i]
	}
	a.Groups = slices.Clone(a.Groups)
	for i := range a.Groups {
		a.Groups[i].Name = byID[a.Groups[i].GID]
	}
	return a, nil
}

// ParseDSCLAttrs reads dscl -read's "Attr: value" lines into a map; a
// value that dscl wraps starts on the next line, indented, and every
// indented line is joined to the attribute before it.
func ParseDSCLAttrs(out string) map[string]string {
	attrs := map[string]string{}
	var last string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") && last != "" {
			attrs[last] = strings.TrimSpace(attrs[last] + " " + strings.TrimSpace(line))
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		last = strings.TrimSpace(k)
		attrs[last] = strings.TrimSpace(v)
	}
	return attrs
}

// ParseDSCLRead reads dscl -read's "Attr: value" lines (a value that
// dscl wraps starts on the next line, indented) into an Account named
// name, with gids (from id -G) as its groups, sorted by gid (unnamed:
// the audit names them).
func ParseDSCLRead(name, out, gids string) (Account, error) {
	attrs := ParseDSCLAttrs(out)
	a := Account{Name: name, Home: attrs["NFSHomeDirectory"], Shell: attrs["UserShell"]}
	var err error
	if a.UID, err = strconv.Atoi(attrs["UniqueID"]); err != nil {
		return Account{}, fmt.Errorf("dscl: account %s: UniqueID %q: %w", name, attrs["UniqueID"], err)
	}
	if a.GID, err = strconv.Atoi(attrs["PrimaryGroupID"]); err != nil {
		return Account{}, fmt.Errorf("dscl: account %s: PrimaryGroupID %q: %w", name, attrs["PrimaryGroupID"], err)
	}
	if a.Home == "" {
		return Account{}, fmt.Errorf("dscl: account %s has no NFSHomeDirectory", name)
	}
	a.Groups = []Group{{GID: a.GID, Primary: true}}
	for _, f := range strings.Fields(gids) {
		g, err := strconv.Atoi(f)
		if err != nil {
			return Account{}, fmt.Errorf("id -G %s: %q is not a gid", name, f)
		}
		if g != a.GID {
			a.Groups = append(a.Groups, Group{GID: g})
		}
	}
	sort.Slice(a.Groups, func(i, j int) bool { return a.Groups[i].GID < a.Groups[j].GID })
	return a, nil
}
