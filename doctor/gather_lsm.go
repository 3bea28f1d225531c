package doctor

import (
	"context"
	"path"
	"strings"

	"github.com/agentbox/agentbox/apparmor"
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
	f.LSM.AppArmor = apparmor.Check(h.Root)
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

// mount is one line of /proc/self/mountinfo: where, what type, and the
// mounted filesystem's root.
type mount struct {
	Point, FSType, Root string
}

// parseMountinfo reads proc_pid_mountinfo(5) lines; malformed lines are
// skipped (the file is the kernel's).
func parseMountinfo(b []byte) []mount {
	var out []mount
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		out = append(out, mount{Point: unescapeMount(f[4]), FSType: g[0], Root: unescapeMount(f[3])})
	}
	return out
}

// unescapeMount undoes the octal escapes of mountinfo (\040 for a space).
func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

const cgroupRoot = "/sys/fs/cgroup"

func gatherCgroup(_ context.Context, h Host, f *Facts) {
	b, _, _ := h.read("/proc/self/mountinfo")
	f.Cgroup.Mode = cgroupMode(parseMountinfo(b))
	f.Cgroup.CanLimit, f.Cgroup.Reason = canLimit(h, f)
}

// cgroupMode classifies the cgroup mounts.
func cgroupMode(ms []mount) string {
	v1, v2 := false, ""
	for _, m := range ms {
		switch m.FSType {
		case "cgroup":
			v1 = true
		case "cgroup2":
			if v2 == "" || m.Point == cgroupRoot {
				v2 = m.Point
			}
		}
	}
	switch {
	case v2 == cgroupRoot:
		return "v2"
	case v1 && v2 != "":
		return "hybrid"
	case v1:
		return "v1"
	case v2 != "":
		return "v2"
	}
	return ""
}

// canLimit is the planner's rule (see host.Capture): root always; an
// ordinary user on v2 when the parent of its own cgroup delegates memory
// and pids to it and it owns that directory.
func canLimit(h Host, f *Facts) (bool, string) {
	switch {
	case !f.User.Rootless():
		return true, ""
	case f.Cgroup.Mode != "v2":
		return false, "cgroup " + orUnknown(f.Cgroup.Mode) + " gives ordinary users no delegated controllers"
	}
	own, _ := h.readString("/proc/self/cgroup")
	rel := strings.TrimPrefix(own, "0::")
	dir := path.Join(cgroupRoot, path.Dir(rel))
	ctrl, _ := h.readString(path.Join(dir, "cgroup.subtree_control"))
	have := strings.Fields(ctrl)
	if !contains(have, "memory") || !contains(have, "pids") {
		return false, "memory and pids controllers are not delegated to " + dir
	}
	if fi, err := h.Sys.Stat(dir); err != nil || int(fi.UID) != f.User.EUID {
		return false, dir + " is not owned by this user"
	}
	return true, ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(not mounted)"
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
