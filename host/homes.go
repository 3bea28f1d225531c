package host

import (
	"path/filepath"
	"strings"

	"github.com/moby/sys/user"

	"github.com/agentbox/agentbox/policy"
)

// Homes is the one list of host home directories: the planner refuses to
// bind them (policy.Host.Homes), and the self-audit, `agentbox audit` and
// the compose audit flag mounts of them. It holds /root, home (the invoking
// user's, normally $HOME, wherever it lies) and the home of every account in
// the passwd file (read with github.com/moby/sys/user), whatever its uid,
// unless that home is a placeholder (/, /nonexistent…) or a service's in a
// system directory (policy.ServiceHome: daemon's /usr/sbin, sshd's
// /run/sshd, postgres's /var/lib/postgresql), which the planner and the
// audit refuse and flag as system directories already; listing those as
// homes would turn a read-only bind of /usr/sbin into a home finding. Paths are cleaned and
// resolved through symlinks where they exist.
//
// Every account, not only uid 0 and 1000–65533: service accounts keep
// deploy keys and tokens in homes such as /srv/git or /opt/app, directory
// users have uids above 65533 and some distributions start people at 500.
// A uid range would leave their homes out and let a bind of them pass the
// audit; an extra entry costs at most a finding that names a real home.
//
// A missing or unreadable passwd file gives /root and home, and a file that
// cannot be read to its end gives the homes before the failure: the audit's
// own patterns (/home/*, /root) still apply.
func Homes(passwd, home string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(h string) {
		h = filepath.Clean(h)
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	add("/root")
	if isPath(home) {
		add(home)
	}
	_, _ = user.ParsePasswdFileFilter(passwd, func(u user.User) bool {
		if IsAccount(u.Name) && isHome(u.Home) {
			add(u.Home)
		}
		return false // collected above, so that a read error keeps them
	})
	return out
}

// isPath is false for the home fields that name no directory of anyone's:
// empty, relative, the root directory and /nonexistent.
func isPath(h string) bool {
	return filepath.IsAbs(h) && filepath.Clean(h) != "/" && !strings.HasPrefix(filepath.Clean(h), "/nonexistent")
}

// isHome is isPath and not a service's home in a system directory
// (policy.ServiceHome; /root and /opt/app are homes).
func isHome(h string) bool {
	return isPath(h) && !policy.ServiceHome(h)
}
