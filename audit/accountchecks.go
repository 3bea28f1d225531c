package audit

import (
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/account"
)

// AccountCheck is one named check of an account audit, like Check for a
// container.
type AccountCheck struct {
	Name  string
	Codes []string
	Run   func(m *AccountModel, o *Options) []Finding
}

// accountChecks is the ordered list of the account audit's checks. The
// environment and auto-approve checks are the container checks, run over
// the account's login environment and home.
var accountChecks = []AccountCheck{
	{"home-directory-readable", []string{CodeHomeReadable}, checkHomesReadable},
	{"credential-file-readable", []string{CodeCredReadable}, checkSecretsReadable},
	{"privileged-group-member", []string{CodePrivilegedGroup, CodeContainerSocket}, checkGroups},
	{"engine-socket-reachable", []string{CodeContainerSocket}, checkSockets},
	{"sudo-rights", []string{CodeSudoRights}, checkSudo},
	{"secret-in-environment", []string{CodeSecretInEnv}, onContainer(checkSecretEnv)},
	{"engine-address", []string{CodeContainerSocket}, onContainer(checkEngineEnv)},
	{"auto-approve-permission-mode", []string{CodeAutoApprove}, onContainer(checkAutoApprove)},
}

// AccountChecks returns the ordered list of the account audit's checks.
func AccountChecks() []AccountCheck { return append([]AccountCheck(nil), accountChecks...) }

func onContainer(f func(c *Container, o *Options) []Finding) func(m *AccountModel, o *Options) []Finding {
	return func(m *AccountModel, o *Options) []Finding {
		c := m.container()
		return f(&c, o)
	}
}

// accessFinding is the finding for one path the account reaches (or whose
// reach could not be decided); nil when it cannot reach it.
func accessFinding(code, acct string, p PathAccess) *Finding {
	if p.Allowed == account.No {
		return nil
	}
	what := orDefault(p.What, "home directory")
	detail := fmt.Sprintf("%s can %s %s of %s: %s", acct, p.Want, what, orDefault(p.Owner, "root"), p.Why)
	f := newFinding(code, p.Path, detail, Location{})
	f.Evidence = fmt.Sprintf("%s %s as %s: %s", p.Want, p.Path, acct, p.Why)
	if p.Path != p.Access.Path {
		f.Evidence += " (reached " + p.Access.Path + ")"
	}
	if p.Allowed == account.Unknown {
		f.Unknown = true
		f.Detail = fmt.Sprintf("whether %s can %s %s could not be decided: %s", acct, p.Want, p.Path, p.Why)
	}
	return &f
}

func checkHomesReadable(m *AccountModel, _ *Options) []Finding {
	var out []Finding
	for _, h := range m.Homes {
		if f := accessFinding(CodeHomeReadable, m.Name, h); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

func checkSecretsReadable(m *AccountModel, _ *Options) []Finding {
	var out []Finding
	for _, s := range m.Secrets {
		if f := accessFinding(CodeCredReadable, m.Name, s); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

func checkSockets(m *AccountModel, _ *Options) []Finding {
	var out []Finding
	for _, s := range m.Sockets {
		s.What = "engine socket"
		if f := accessFinding(CodeContainerSocket, m.Name, s); f != nil {
			f.Detail = fmt.Sprintf("%s can connect to the engine socket %s: %s", m.Name, s.Path, s.Why)
			out = append(out, *f)
		}
	}
	return out
}

// privilegedGroups are the groups whose members hold an administrator's or
// an engine's power, and what it is. docker and lxd are engine sockets by
// another name.
var privilegedGroups = map[string]struct{ code, power string }{
	"docker": {CodeContainerSocket, "the Docker socket: root on the host through any container"},
	"lxd":    {CodeContainerSocket, "the LXD socket: root on the host through a privileged container"},
	"incus":  {CodeContainerSocket, "the Incus socket: root on the host through a privileged container"},
	"podman": {CodeContainerSocket, "the rootful Podman socket"},
	"sudo":   {CodePrivilegedGroup, "sudo as an administrator (Debian, Ubuntu)"},
	"wheel":  {CodePrivilegedGroup, "sudo or su as an administrator"},
	"admin":  {CodePrivilegedGroup, "administrator (macOS, older Ubuntu)"},
	"adm":    {CodePrivilegedGroup, "reads the system logs"},
	"staff":  {CodePrivilegedGroup, "lists users' homes on macOS; writes /usr/local on Debian"},
	"root":   {CodePrivilegedGroup, "the group of root-owned files"},
	"disk":   {CodePrivilegedGroup, "raw block devices: every file on the disks"},
	"shadow": {CodePrivilegedGroup, "reads /etc/shadow"},
}

func checkGroups(m *AccountModel, _ *Options) []Finding {
	var out []Finding
	for _, g := range m.Groups {
		p, ok := privilegedGroups[g.Name]
		if !ok {
			continue
		}
		f := newFinding(p.code, "group "+g.Name, fmt.Sprintf("%s is a member of %s (gid %d): %s", m.Name, g.Name, g.GID, p.power), Location{})
		f.Evidence = fmt.Sprintf("id %s: groups include %s(%d)", m.Name, g.Name, g.GID)
		if p.code == CodeContainerSocket {
			f.Fix = "remove the account from the group: gpasswd -d " + m.Name + " " + g.Name
		}
		out = append(out, f)
	}
	return out
}

func checkSudo(m *AccountModel, _ *Options) []Finding {
	var out []Finding
	for _, r := range m.Sudo.Rules {
		f := newFinding(CodeSudoRights, r.Via, fmt.Sprintf("%s matches this sudoers line through %s", m.Name, r.Via), Location{File: r.File, Line: r.Line})
		if r.NoPasswd {
			f.Severity = Critical
			f.Detail += ", and no password is asked"
		}
		f.Evidence = r.Text
		out = append(out, f)
	}
	if len(m.Sudo.Errors) > 0 {
		f := newFinding(CodeSudoRights, "sudoers", "the sudoers files could not all be read: "+strings.Join(m.Sudo.Errors, "; "), Location{})
		f.Unknown = true
		out = append(out, f)
	}
	return out
}
