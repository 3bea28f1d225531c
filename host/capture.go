package host

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/opencontainers/selinux/go-selinux"
	"github.com/opencontainers/selinux/go-selinux/label"
	"golang.org/x/term"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/policy"
)

// Capture reads the facts about this host and process; it decides
// nothing (the plan does). environ is the
// launcher's environment (KEY=VALUE, as os.Environ gives it): the plan
// passes variables from it, and HOME in it names the invoker's home when
// it is absolute. Capture reads no environment of its own.
func Capture(environ []string) (policy.Host, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return policy.Host{}, fmt.Errorf("working directory: %w", err)
	}
	h := policy.Host{
		EUID: uint32(os.Geteuid()), EGID: uint32(os.Getegid()),
		Environ:  slices.Clone(environ),
		Cwd:      cwd,
		Terminal: term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd())),
		FS:       OSFS{},
		SELinux:  selinux.GetEnabled(),
	}
	t := Live()
	h.AppArmor = t.AppArmor().Enabled // the one detection: module parameter and securityfs
	if h.SELinux {
		// Reserve this run's MCS level; the process and mount labels go to
		// the spec. agentbox does not relabel the workspace (see README).
		p, m, err := label.InitLabels(nil)
		if err != nil {
			return policy.Host{}, fmt.Errorf("selinux labels: %w", err)
		}
		h.SELinuxLabels = [2]string{p, m}
	}
	if h.AppArmor {
		// Loading a profile needs root; an ordinary user can only use one
		// that an administrator has loaded.
		loaded, _ := apparmor.IsLoaded(policy.AppArmorProfile)
		h.AppArmorReady = h.EUID == 0 || loaded
	}
	h.Home = t.Account(h.EUID, lookup(environ)).Home
	h.Homes = Homes(t.path("/etc/passwd"), h.Home)
	cg := t.Cgroup(h.EUID)
	h.CgroupV2 = cg.Mode == CgroupV2
	h.CanLimit, h.LimitReason = cg.CanLimit, cg.Reason
	if cg.Fix != "" {
		h.LimitReason += " (" + cg.Fix + ")"
	}
	return h, nil
}

// lookup is getenv over environ: the first assignment of a name wins, as
// it does for os.Getenv.
func lookup(environ []string) func(string) string {
	return func(name string) string {
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
}
