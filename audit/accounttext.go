package audit

import (
	"fmt"
	"strings"
)

// account writes an account audit's sections (Account, Reach, Sudo,
// Environment) in place of a container's.
func (t *textWriter) account(m *AccountModel) {
	t.section("Account")
	groups := make([]string, 0, len(m.Groups))
	for _, g := range m.Groups {
		groups = append(groups, fmt.Sprintf("%s(%d)", orDefault(g.Name, "?"), g.GID))
	}
	t.printf("  uid %d gid %d home %s shell %s\n", m.UID, m.GID, m.Home, m.Shell)
	t.printf("  groups: %s\n", strings.Join(groups, ", "))
	t.section("Reach (what the account can open of other users' files)")
	n := 0
	for _, ps := range [][]PathAccess{m.Homes, m.Secrets, m.Sockets} {
		for _, p := range ps {
			n++
			t.printf("  %-7s %-7s %s (%s)\n", p.Allowed, p.Want, p.Path, p.Why)
		}
	}
	if n == 0 {
		t.printf("  (no other home, credential file or engine socket found)\n")
	}
	t.section("Sudo")
	for _, r := range m.Sudo.Rules {
		t.printf("  %s:%d %s\n", r.File, r.Line, r.Text)
	}
	if len(m.Sudo.Rules) == 0 {
		t.printf("  (no rule names the account or its groups)\n")
	}
	t.env(m.container())
	t.printf("  read from: %s\n", orDefault(strings.Join(m.ProfileFiles, ", "), "(no login file)"))
}
