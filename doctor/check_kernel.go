package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// sysctlConf is the file the fixes persist sysctl settings in.
const sysctlConf = "/etc/sysctl.d/90-agentbox.conf"

// persistSysctl is the fix line that sets key=value now and at boot.
func persistSysctl(key, value string) string {
	return fmt.Sprintf("sysctl -w %s=%s && echo '%s=%s' >> %s", key, value, key, value, sysctlConf)
}

func checkKernel(f *Facts) []Result {
	r := Result{ID: "kernel"}
	major, minor, ok := kernelVersion(f.Kernel)
	switch {
	case f.Kernel == "":
		r.Status, r.Detail, r.Fix = Unknown, "cannot read /proc/sys/kernel/osrelease", "uname -r"
	case !ok:
		r.Status, r.Detail, r.Fix = Unknown, fmt.Sprintf("cannot read a version from kernel release %q", f.Kernel), "uname -r"
	case major < 5 || major == 5 && minor < 13:
		r.Status, r.Detail = Warn, fmt.Sprintf("kernel %s is older than 5.13: it has no Landlock, so without SELinux or AppArmor nothing restricts file access beyond the mount layout", f.Kernel)
		r.Fix = "upgrade to your distribution's current kernel (5.13 or later)"
	default:
		r.Status, r.Detail = Pass, "kernel "+f.Kernel
	}
	return []Result{r}
}

// kernelVersion reads major.minor from a release such as "6.1.0-18-amd64".
func kernelVersion(rel string) (major, minor int, ok bool) {
	p := strings.SplitN(rel, ".", 3)
	if len(p) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(p[0])
	minor, err2 := strconv.Atoi(strings.TrimRightFunc(p[1], func(r rune) bool { return r < '0' || r > '9' }))
	return major, minor, err1 == nil && err2 == nil
}

func checkUserNSMax(f *Facts) []Result {
	r := Result{ID: "userns-max", Layer: LayerUserNS}
	n, err := strconv.Atoi(f.UserNS.Max.Value)
	switch {
	case !f.UserNS.Max.Present:
		r.Status, r.Detail = Fail, "the kernel has no user namespaces (no /proc/sys/user/max_user_namespaces): agentbox maps every sandbox to unprivileged host ids through one"
		r.Fix = "boot a kernel built with CONFIG_USER_NS=y (every distribution kernel is)"
	case err != nil:
		r.Status, r.Detail, r.Fix = Unknown, fmt.Sprintf("user.max_user_namespaces reads %q", f.UserNS.Max.Value), "sysctl user.max_user_namespaces"
	case n == 0:
		r.Status, r.Detail = Fail, "user.max_user_namespaces is 0: no process may create a user namespace"
		r.Fix = persistSysctl("user.max_user_namespaces", "15000")
	default:
		r.Status, r.Detail = Pass, fmt.Sprintf("user.max_user_namespaces is %d", n)
	}
	return []Result{r}
}

func checkUnprivClone(f *Facts) []Result {
	r := Result{ID: "userns-unprivileged-clone", Layer: LayerUserNS, Status: Pass}
	v := f.UserNS.UnprivClone
	switch {
	case !v.Present:
		r.Detail = "kernel.unprivileged_userns_clone does not exist on this kernel: no such restriction"
	case v.Value != "0":
		r.Detail = "kernel.unprivileged_userns_clone is " + v.Value + ": ordinary users may create user namespaces"
	case !f.User.Rootless():
		r.Detail = "kernel.unprivileged_userns_clone is 0, which restricts ordinary users only; doctor runs as root"
	default:
		r.Status, r.Detail = Fail, "kernel.unprivileged_userns_clone is 0: ordinary users may not create user namespaces, so rootless agentbox cannot start a sandbox"
		r.Fix = persistSysctl("kernel.unprivileged_userns_clone", "1") + " (or run agentbox as root)"
	}
	return []Result{r}
}

// userNSProfile is the AppArmor profile the fix installs for a runtime.
func userNSProfile(rt string) string { return "agentbox-userns-" + rt }

func checkAppArmorRestrict(f *Facts) []Result {
	r := Result{ID: "userns-apparmor-restrict", Layer: LayerUserNS, Status: Pass}
	v := f.UserNS.AppArmorRestrict
	rt, path := restrictedRuntime(f)
	switch {
	case !v.Present || v.Value == "0":
		r.Detail = "kernel.apparmor_restrict_unprivileged_userns is off or absent: AppArmor does not restrict user namespaces"
	case !f.User.Rootless():
		r.Detail = "kernel.apparmor_restrict_unprivileged_userns is " + v.Value + ", which restricts unprivileged processes only; doctor runs as root"
	case contains(f.LSM.Profiles, userNSProfile(rt)):
		r.Detail = "kernel.apparmor_restrict_unprivileged_userns is " + v.Value + "; AppArmor profile " + userNSProfile(rt) + " lets " + path + " create user namespaces"
	case contains(f.LSM.Profiles, rt):
		r.Status, r.Detail = Warn, "kernel.apparmor_restrict_unprivileged_userns is "+v.Value+"; a profile named "+rt+" is loaded but doctor cannot see whether it allows user namespaces; the self-test shows whether rootless runs work"
		r.Fix = userNSProfileFix(rt, path)
	default:
		r.Status = Fail
		r.Detail = "kernel.apparmor_restrict_unprivileged_userns is " + v.Value + " (Ubuntu 23.10 and later): an unprivileged process that creates a user namespace loses every capability in it, so rootless " + rt + " cannot set a sandbox up, and no AppArmor profile exempts " + path
		r.Fix = userNSProfileFix(rt, path)
	}
	return []Result{r}
}

// restrictedRuntime is the runtime a rootless run would use and its path.
func restrictedRuntime(f *Facts) (string, string) {
	for _, rt := range f.Runtimes {
		if rt.Name == f.defaultRuntime() {
			return rt.Name, rt.Path
		}
	}
	if len(f.Runtimes) > 0 {
		return f.Runtimes[0].Name, f.Runtimes[0].Path
	}
	return f.defaultRuntime(), "/usr/sbin/" + f.defaultRuntime()
}

// userNSProfileFix installs an AppArmor profile that lets only the runtime
// binary create user namespaces, leaving the restriction on for the rest.
func userNSProfileFix(rt, path string) string {
	name := userNSProfile(rt)
	return fmt.Sprintf(`printf 'abi <abi/4.0>,\ninclude <tunables/global>\nprofile %s %s flags=(unconfined) {\n  userns,\n}\n' | sudo tee /etc/apparmor.d/%s && sudo apparmor_parser -r /etc/apparmor.d/%s`, name, path, name, name)
}

func checkUserNSCreate(f *Facts) []Result {
	r := Result{ID: "userns-create", Layer: LayerUserNS}
	switch {
	case !f.UserNS.CreateRan:
		r.Status, r.Detail, r.Fix = Unknown, "could not run the probe: "+f.UserNS.CreateErr, installCommand(f.OS, "coreutils")
	case f.UserNS.CreateErr == "":
		r.Status, r.Detail = Pass, "a child process created a user namespace"
	case len(f.Container.Evidence) > 0:
		r.Status, r.Detail = Fail, "creating a user namespace failed ("+f.UserNS.CreateErr+"): doctor runs inside a container whose engine refuses it (Docker's default seccomp profile does)"
		r.Fix = "run agentbox on the host or in a VM, not inside a container"
	default:
		r.Status, r.Detail = Fail, "creating a user namespace failed: "+f.UserNS.CreateErr
		r.Fix = "fix the userns checks above, then confirm with: unshare --user true"
	}
	return []Result{r}
}

func checkSubIDs(f *Facts) []Result {
	r := Result{ID: "subids", Layer: LayerUserNS}
	switch {
	case f.IDs.Err != "":
		r.Status, r.Detail, r.Fix = Fail, "cannot read the id databases: "+f.IDs.Err, "correct the named line of the file"
	case !f.User.Rootless():
		return []Result{rootSubIDs(f, r)}
	case f.IDs.Mode == policy.IDSubIDs:
		r.Status, r.Detail = Pass, fmt.Sprintf("rootless sandboxes map their ids onto %s's subordinate ranges (%s)", f.User.Name, describeRanges(f.IDs.SubUIDs))
	default:
		r.Status, r.Residual = Warn, policy.ResidualRootlessSingle
		r.Detail = "rootless sandboxes can map only " + f.User.Name + "'s own uid and gid: " + f.IDs.Reason
		r.Fix = subIDFix(f, f.User.Name)
	}
	return []Result{r}
}

func rootSubIDs(f *Facts, r Result) Result {
	switch {
	case f.IDs.SlotsErr != "":
		r.Status, r.Detail = Fail, "no id range can be allocated for a sandbox: "+f.IDs.SlotsErr
		r.Fix = fmt.Sprintf("give user %s complete entries of at least %d ids in both files: usermod --add-subuids %d-%d --add-subgids %d-%d %s",
			userns.DedicatedOwner, userns.SlotSize, f.IDs.FreeStart, f.IDs.FreeStart+userns.SlotSize-1, f.IDs.FreeStart, f.IDs.FreeStart+userns.SlotSize-1, userns.DedicatedOwner)
	case f.IDs.Source == userns.SourceDedicated:
		r.Status, r.Detail = Pass, fmt.Sprintf("sandbox ids come from user %s's dedicated ranges (%s)", userns.DedicatedOwner, describeRanges(f.IDs.SubUIDs))
	default:
		r.Status = Pass
		r.Detail = fmt.Sprintf("sandbox ids come from agentbox's built-in range from %d, which steps over every user's subordinate ranges; ranges picked at run time (podman --userns=auto, systemd-nspawn -U) are not seen, so give user %s a dedicated entry on hosts that use them", userns.BuiltinBase, userns.DedicatedOwner)
	}
	return r
}

// subIDFix gives user subordinate ranges where none exist yet and installs
// newuidmap and newgidmap where they are missing.
func subIDFix(f *Facts, user string) string {
	install := installCommand(f.OS, idmapPackage(f.OS))
	if len(f.IDs.SubUIDs) > 0 && len(f.IDs.SubGIDs) > 0 {
		return install
	}
	s, e := f.IDs.FreeStart, f.IDs.FreeStart+userns.SlotSize-1
	fix := fmt.Sprintf("sudo usermod --add-subuids %d-%d --add-subgids %d-%d %s", s, e, s, e, user)
	if !f.IDs.NewIDMap {
		fix = install + " && " + fix
	}
	return fix
}

// idmapPackage is the package with newuidmap and newgidmap.
func idmapPackage(os OSRelease) string {
	switch os.ID {
	case "fedora", "rhel", "centos", "rocky", "almalinux":
		return "shadow-utils"
	}
	return "uidmap"
}

func describeRanges(es []userns.SubIDEntry) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("%d-%d", e.Start, e.End()-1))
	}
	if len(parts) == 0 {
		return "none"
	}
	return "uids " + strings.Join(parts, ", ")
}

func checkSeccomp(f *Facts) []Result {
	r := Result{ID: "seccomp", Layer: LayerSeccomp}
	s := f.Seccomp
	switch {
	case s.Mode == "":
		r.Status, r.Detail = Fail, "the kernel has no seccomp (no Seccomp field in /proc/self/status)"
		r.Fix = "boot a kernel built with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y"
	case !s.ActionsRead:
		r.Status, r.Detail = Unknown, "cannot tell whether seccomp filters work: /proc/sys/kernel/seccomp/actions_avail is missing (a kernel older than 4.14 or without CONFIG_SECCOMP_FILTER)"
		r.Fix = "upgrade to your distribution's current kernel"
	case !contains(s.Actions, "errno"):
		r.Status, r.Detail = Fail, "seccomp filters cannot return errors (no errno in actions_avail): agentbox's profile denies calls with EPERM"
		r.Fix = "upgrade to your distribution's current kernel"
	case s.Mode == "2":
		r.Status, r.Detail = Pass, fmt.Sprintf("seccomp filters work; doctor itself already runs under %s filter(s) (an outer container or service manager), and agentbox's filter stacks on them", orUnknownCount(s.Filters))
	default:
		r.Status, r.Detail = Pass, "seccomp filters work (Seccomp: "+s.Mode+")"
	}
	return []Result{r}
}

func orUnknownCount(n string) string {
	if n == "" {
		return "an unknown number of"
	}
	return n
}

func checkSeccompActions(f *Facts) []Result {
	r := Result{ID: "seccomp-actions"}
	s := f.Seccomp
	var missing []string
	for _, a := range []struct{ name, why string }{
		{"log", "log (SECCOMP_RET_LOG, kernel 4.14): a profile cannot log a call instead of refusing it"},
		{"user_notif", "user_notif (SECCOMP_RET_USER_NOTIF, kernel 5.0): no supervisor can answer a call on the sandbox's behalf"},
	} {
		if !contains(s.Actions, a.name) {
			missing = append(missing, a.why)
		}
	}
	switch {
	case !s.ActionsRead:
		r.Status, r.Detail, r.Fix = Unknown, "/proc/sys/kernel/seccomp/actions_avail is missing", "upgrade to your distribution's current kernel"
	case len(missing) > 0:
		r.Status, r.Detail, r.Fix = Warn, "missing "+strings.Join(missing, "; "), "upgrade to your distribution's current kernel"
	default:
		r.Status, r.Detail = Pass, "SECCOMP_RET_LOG and user notification are available"
	}
	return []Result{r}
}
