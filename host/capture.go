package host

import (
	"fmt"
	"os"

	"github.com/opencontainers/selinux/go-selinux"
	"github.com/opencontainers/selinux/go-selinux/label"
	"golang.org/x/term"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/policy"
)

// Capture reads the facts about this host and process. The caller fills
// Host.MapIDs once an id range is allocated.
func Capture() (policy.Host, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return policy.Host{}, fmt.Errorf("working directory: %w", err)
	}
	h := policy.Host{
		EUID: uint32(os.Geteuid()), EGID: uint32(os.Getegid()),
		Environ:  os.Environ(),
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
	h.Home = t.Account(h.EUID, os.Getenv).Home
	h.Homes = Homes(t.path("/etc/passwd"), h.Home)
	cg := t.Cgroup(h.EUID)
	h.CgroupV2 = cg.Mode == CgroupV2
	h.CanLimit, h.LimitReason = cg.CanLimit, cg.Reason
	if cg.Fix != "" {
		h.LimitReason += " (" + cg.Fix + ")"
	}
	return h, nil
}
