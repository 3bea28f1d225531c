package doctor

import (
	"context"
	"strings"
)

func gatherLSM(_ context.Context, h Host, f *Facts) {
	if s, ok := h.readString("/sys/kernel/security/lsm"); ok {
		f.LSM.Known = true
		f.LSM.Active = strings.Split(s, ",")
	}
	switch s, ok := h.readString("/sys/fs/selinux/enforce"); {
	case ok && s == "1":
		f.LSM.SELinux = "enforcing"
	case ok && s == "0":
		f.LSM.SELinux = "permissive"
	}
	f.LSM.AppArmor = h.tree().AppArmor()
	if p, err := h.Sys.LookPath("apparmor_parser"); err == nil {
		f.LSM.Parser = p
	}
	f.LSM.Profiles = apparmorProfiles(h)
	abi, err := h.Sys.LandlockABI()
	f.LSM.LandlockABI = abi
	if err != nil {
		f.LSM.LandlockErr = err.Error()
	}
}

// apparmorProfiles lists the loaded profiles' names ("runc (unconfined)"
// gives "runc").
func apparmorProfiles(h Host) []string {
	b, ok, _ := h.read("/sys/kernel/security/apparmor/profiles")
	if !ok {
		return nil
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if name, _, _ := strings.Cut(line, " ("); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// gatherCgroup takes the cgroup layout and the limits decision from
// host.Tree, as `agentbox run` does.
func gatherCgroup(_ context.Context, h Host, f *Facts) {
	cg := h.tree().Cgroup(uint32(f.User.EUID))
	f.Cgroup = CgroupFacts{Mode: cg.Mode, CanLimit: cg.CanLimit, Reason: cg.Reason, Err: cg.Err}
}

// orUnknown names a fact that could not be read.
func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
