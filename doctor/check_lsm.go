package doctor

import (
	"fmt"
	"strings"
)

func checkLSMActive(f *Facts) []Result {
	if !f.LSM.Known {
		return []Result{{
			ID: "lsm-active", Status: Unknown,
			Detail: "securityfs is not mounted, so /sys/kernel/security/lsm cannot say which LSMs are active",
			Fix:    "mount -t securityfs securityfs /sys/kernel/security",
		}}
	}
	return []Result{{ID: "lsm-active", Status: Pass, Detail: "active LSMs: " + strings.Join(f.LSM.Active, ",")}}
}

func checkSELinux(f *Facts) []Result {
	r := Result{ID: "selinux", Status: Pass}
	switch f.LSM.SELinux {
	case "enforcing":
		r.Detail = "SELinux is enforcing"
	case "permissive":
		r.Status, r.Detail = Warn, "SELinux is permissive: it labels processes but denies nothing"
		r.Fix = "setenforce 1 && sed -i 's/^SELINUX=.*/SELINUX=enforcing/' /etc/selinux/config"
	default:
		r.Detail = "SELinux is not enabled (no /sys/fs/selinux/enforce)"
	}
	return []Result{r}
}

func checkAppArmor(f *Facts) []Result {
	r := Result{ID: "apparmor", Status: Pass}
	switch {
	case !f.LSM.AppArmor.Enabled:
		r.Detail = "AppArmor is not enabled: " + f.LSM.AppArmor.Reason
	case appArmorReady(f):
		r.Detail = "AppArmor is enabled; agentbox loads and applies its profile " + appArmorProfile
	default:
		r.Status, r.Detail = Warn, "AppArmor is enabled but apparmor_parser is missing, so agentbox cannot load its profile "+appArmorProfile
		r.Fix = installCommand(f.OS, "apparmor")
	}
	return []Result{r}
}

// appArmorProfile is the profile runs are confined by (apparmor.DefaultName).
const appArmorProfile = "agentbox-default"

// appArmorReady reports whether agentbox's profile is loaded or loadable.
func appArmorReady(f *Facts) bool {
	return f.LSM.Parser != "" || contains(f.LSM.Profiles, appArmorProfile)
}

func checkLandlock(f *Facts) []Result {
	r := Result{ID: "landlock", Status: Pass}
	major, minor, _ := kernelVersion(f.Kernel)
	switch {
	case f.LSM.LandlockErr != "":
		r.Status, r.Detail, r.Fix = Unknown, "cannot ask the kernel for its Landlock ABI: "+f.LSM.LandlockErr, "uname -r; cat /sys/kernel/security/lsm"
	case f.LSM.LandlockABI > 0:
		r.Detail = fmt.Sprintf("Landlock ABI %d", f.LSM.LandlockABI)
	case labelMAC(f) != "":
		r.Detail = "Landlock is not active; " + labelMAC(f) + " provides the MAC layer"
	case major < 5 || major == 5 && minor < 13:
		r.Status, r.Detail, r.Fix = Warn, "Landlock is not available: kernel "+f.Kernel+" predates it (5.13)", "upgrade to your distribution's current kernel (5.13 or later)"
	default:
		r.Status, r.Detail = Warn, "Landlock is not active (the kernel lacks CONFIG_SECURITY_LANDLOCK or landlock is not in its lsm= list)"
		r.Fix = landlockBootFix(f)
	}
	return []Result{r}
}

// landlockBootFix adds landlock to the kernel's LSM list at next boot.
func landlockBootFix(f *Facts) string {
	list := "landlock,lockdown,yama,integrity,apparmor,bpf"
	if f.LSM.Known {
		names := []string{"landlock"}
		for _, m := range f.LSM.Active {
			if m != "landlock" {
				names = append(names, m)
			}
		}
		list = strings.Join(names, ",")
	}
	return fmt.Sprintf(`sed -i 's/^GRUB_CMDLINE_LINUX="/&lsm=%s /' /etc/default/grub && update-grub && reboot`, list)
}

// labelMAC names the label-based MAC that holds here, or "".
func labelMAC(f *Facts) string {
	switch {
	case f.LSM.SELinux == "enforcing":
		return "SELinux (enforcing)"
	case f.LSM.SELinux == "" && f.LSM.AppArmor.Enabled && appArmorReady(f):
		return "AppArmor"
	}
	return ""
}

// checkMAC decides the mandatory access control layer: SELinux or AppArmor
// labels, else Landlock, as the planner and init choose (the planner prefers
// SELinux whenever it is enabled, even permissive).
func checkMAC(f *Facts) []Result {
	r := Result{ID: "mac", Layer: LayerMAC}
	switch {
	case labelMAC(f) != "":
		r.Status, r.Detail = Pass, labelMAC(f)+" confines the sandbox"
	case f.LSM.SELinux == "permissive":
		r.Status, r.Residual = Warn, "selinux-permissive"
		r.Detail = "SELinux is permissive: the sandbox is labelled, but nothing enforces the labels, and Landlock is not applied in their place"
		r.Fix = "setenforce 1 && sed -i 's/^SELINUX=.*/SELINUX=enforcing/' /etc/selinux/config"
	case f.LSM.AppArmor.Enabled:
		r.Status, r.Detail = Fail, "AppArmor is enabled, so runs ask for profile "+appArmorProfile+", but apparmor_parser is missing to load it"
		r.Fix = installCommand(f.OS, "apparmor")
	case f.LSM.LandlockErr != "":
		r.Status, r.Detail = Unknown, "no SELinux or AppArmor, and the kernel did not say whether Landlock is available: "+f.LSM.LandlockErr
		r.Fix = "uname -r; cat /sys/kernel/security/lsm (inside a container, run agentbox on the host instead)"
	case f.LSM.LandlockABI > 0:
		r.Status, r.Residual = Warn, "lsm-unavailable"
		r.Detail = fmt.Sprintf("no SELinux or AppArmor: Landlock ABI %d applied instead", f.LSM.LandlockABI)
		r.Fix = "none needed for the boundary; for label-based confinement as well, enable AppArmor (" + installCommand(f.OS, "apparmor") + ", boot with apparmor=1 security=apparmor)"
	default:
		r.Status, r.Residual = Warn, "lsm-unavailable"
		r.Detail = "no SELinux, AppArmor or Landlock: what the sandbox may open rests on the mount layout, namespaces and seccomp alone"
		r.Fix = landlockBootFix(f)
	}
	return []Result{r}
}

func checkCgroup(f *Facts) []Result {
	r := Result{ID: "cgroup", Layer: LayerLimits}
	c := f.Cgroup
	switch {
	case c.Mode == "" && c.Err != "":
		r.Status, r.Detail, r.Fix = Unknown, "cannot read the cgroup layout: "+c.Err, "mount -t proc proc /proc, or run agentbox on the host instead"
	case c.Mode == "":
		r.Status, r.Detail, r.Fix = Unknown, "no cgroup filesystem is mounted at /sys/fs/cgroup", "mount -t cgroup2 none /sys/fs/cgroup"
	case c.CanLimit && !f.User.Rootless():
		r.Status, r.Detail = Pass, "cgroup "+describeMode(c.Mode)+": root applies memory, pids and CPU limits"
	case c.CanLimit:
		r.Status, r.Detail = Pass, "cgroup v2 with memory and pids delegated to "+f.User.Name
	default:
		r.Status, r.Residual = Warn, "no-resource-limits"
		r.Detail = "runs by " + f.User.Name + " get no memory or pids limits: " + c.Reason
		r.Fix = cgroupFix(c.Mode)
	}
	return []Result{r}
}

func describeMode(mode string) string {
	switch mode {
	case "hybrid":
		return "hybrid (v1 controllers, v2 at /sys/fs/cgroup/unified; limits go through v1, which runc 1.4 and crun 1.18 deprecate)"
	case "v1":
		return "v1 (which runc 1.4 and crun 1.18 deprecate)"
	}
	return mode
}

func cgroupFix(mode string) string {
	if mode != "v2" {
		return `sed -i 's/^GRUB_CMDLINE_LINUX="/&systemd.unified_cgroup_hierarchy=1 /' /etc/default/grub && update-grub && reboot`
	}
	return `sudo mkdir -p /etc/systemd/system/user@.service.d && printf '[Service]\nDelegate=cpu cpuset io memory pids\n' | sudo tee /etc/systemd/system/user@.service.d/delegate.conf && sudo systemctl daemon-reload, then log in again (https://rootlesscontaine.rs/getting-started/common/cgroup2/)`
}
