package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentbox/agentbox/spec"
)

// DefaultCaps is the capability set Docker (and containerd's default spec)
// gives a container. Capabilities beyond it are "added"; any of it kept is
// "not dropped".
var DefaultCaps = []string{
	"CAP_AUDIT_WRITE", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_MKNOD", "CAP_NET_BIND_SERVICE",
	"CAP_NET_RAW", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID",
	"CAP_SYS_CHROOT",
}

// MaskedPaths and ReadonlyPaths are the /proc and /sys paths every engine
// masks or makes read-only by default, taken from the spec's lists (the
// entries engines share); missing ones are proc-masks-removed. agentbox
// hides more (spec.MaskedPaths), but a container lacking only those has
// lost no default.
var (
	MaskedPaths   = spec.EnginePaths(spec.MaskedPaths)
	ReadonlyPaths = spec.EnginePaths(spec.ReadonlyPaths)
)

func checkRoot(c *Container, o *Options) []Finding {
	if RunsAsRoot(c.User) && c.RootUser != "" {
		return []Finding{rootIsUser(c)}
	}
	if !RunsAsRoot(c.User) || c.UserNS == Yes {
		return nil
	}
	d := "the process runs as root and there is no user namespace: root inside is root on the host"
	if c.User == "" {
		d = "no user is set, so the process runs as the image's user, root unless the image says otherwise, without a user namespace"
	}
	if c.UserNS == Unknown {
		d += "; whether the engine remaps users cannot be read from this source"
	}
	f := newFinding(CodeRunsAsRoot, "user "+orDefault(c.User, "(image default)"), d, c.keyLocation("user"))
	f.Unknown = c.UserNS == Unknown
	f.Evidence = fmt.Sprintf("user=%q userns=%s", c.User, c.UserNS)
	return []Finding{f}
}

// rootIsUser is the runs-as-root finding of a container whose root is an
// ordinary host user (rootless Podman's default mapping): not host root,
// but that user, owner of everything of theirs that is bound in.
func rootIsUser(c *Container) Finding {
	f := newFinding(CodeRunsAsRoot, "user "+orDefault(c.User, "(image default)"),
		fmt.Sprintf("the process runs as root, and root inside is %s on the host: the rootless engine maps container root to the user who runs it, so a container escape is that user, and every file of theirs bound in is root's to change (--user 1000:1000 or --userns=keep-id maps the process to a subordinate id instead)", c.RootUser),
		c.keyLocation("user"))
	f.Severity = Medium
	f.Evidence = fmt.Sprintf("user=%q userns=%s root=%s", c.User, c.UserNS, c.RootUser)
	return f
}

func checkPrivileged(c *Container, o *Options) []Finding {
	if !c.Privileged {
		return nil
	}
	f := newFinding(CodePrivileged, "privileged", catalog[CodePrivileged].Title, c.keyLocation("privileged"))
	f.Evidence = "privileged=true"
	return []Finding{f}
}

func checkReadOnlyRoot(c *Container, o *Options) []Finding {
	if c.ReadOnlyRoot {
		return nil
	}
	f := newFinding(CodeWritableRoot, "root filesystem", "the root filesystem is mounted read-write", c.keyLocation("read_only"))
	f.Evidence = "read_only=false"
	return []Finding{f}
}

// checkCaps compares the resulting capability set with the engine default:
// capabilities beyond it are added, capabilities of it kept are not dropped.
// A privileged container is reported once, as privileged.
func checkCaps(c *Container, o *Options) []Finding {
	if c.Privileged {
		return nil
	}
	if !c.CapsKnown {
		f := newFinding(CodeCapsNotDropped, "capabilities", "the capability set cannot be read from this source", c.keyLocation("cap_drop"))
		f.Unknown = true
		return []Finding{f}
	}
	caps, out := initCaps(c, o)
	added, kept := splitCaps(caps, c.CapAdd, c.engineCaps())
	if len(added) > 0 {
		f := newFinding(CodeCapsAdded, capsSubject(added, c.CapAdd), fmt.Sprintf("capabilities added to the process: %s", strings.Join(added, ", ")), c.keyLocation("cap_add"))
		f.Evidence = "caps=" + strings.Join(c.Caps, ",")
		out = append(out, f)
	}
	if len(kept) > 0 {
		f := newFinding(CodeCapsNotDropped, fmt.Sprintf("%d default capabilities", len(kept)), fmt.Sprintf("%d default capabilities are kept: %s", len(kept), strings.Join(kept, ", ")), c.keyLocation("cap_drop"))
		f.Evidence = "cap_drop=" + strings.Join(c.CapDrop, ",")
		out = append(out, f)
	}
	return out
}

// initCaps takes the capabilities the caller's init holds for its children
// (Options.Init) out of the container's set, reporting them as one
// informational finding, and returns the rest. It takes nothing when the
// process is not that init, its binary is not bound read-only, or one of
// the capabilities would survive an exec.
func initCaps(c *Container, o *Options) ([]string, []Finding) {
	in := o.Init
	if in == nil || len(c.Command) == 0 || c.Command[0] != in.Path || !readOnlyMountAt(c, in.Path) {
		return c.Caps, nil
	}
	held := wordSet(in.Caps...)
	var rest, taken []string
	for _, cp := range c.Caps {
		if held[cp] && !slices.Contains(c.CapsInherited, cp) {
			taken = append(taken, cp)
		} else {
			rest = append(rest, cp)
		}
	}
	if len(taken) == 0 {
		return c.Caps, nil
	}
	sort.Strings(taken)
	f := newFinding(CodeInitCaps, in.Path+": "+strings.Join(taken, ","),
		fmt.Sprintf("%s holds %s only to start its children under the agent's uid; they drop them before they execute anything", in.Path, strings.Join(taken, ", ")),
		c.keyLocation("cap_add"))
	f.Evidence = "process=" + in.Path + " caps=" + strings.Join(taken, ",")
	return rest, []Finding{f}
}

// readOnlyMountAt reports whether a read-only mount has destination p.
func readOnlyMountAt(c *Container, p string) bool {
	for _, m := range c.Mounts {
		if m.Destination == p && m.ReadOnly {
			return true
		}
	}
	return false
}

// capsSubject names ALL when the source added ALL, the caps otherwise.
func capsSubject(added, capAdd []string) string {
	for _, c := range capAdd {
		if c == "ALL" {
			return "ALL"
		}
	}
	return strings.Join(added, ",")
}

// splitCaps divides the effective set: a capability is added when it is
// beyond the engine default or named by the configuration's own cap_add
// (after `cap_drop: [ALL]`, `cap_add: [NET_RAW]` adds NET_RAW back, as the
// lab's script says too), and kept when it is a default nobody asked for.
func splitCaps(caps, capAdd, defaults []string) (added, kept []string) {
	def, asked := wordSet(defaults...), wordSet(capAdd...)
	for _, c := range caps {
		if def[c] && !asked[c] && !asked["ALL"] {
			kept = append(kept, c)
		} else {
			added = append(added, c)
		}
	}
	sort.Strings(added)
	sort.Strings(kept)
	return added, kept
}

func checkNoNewPrivileges(c *Container, o *Options) []Finding {
	if c.NoNewPrivileges == Yes {
		return nil
	}
	f := newFinding(CodeNewPrivileges, "no-new-privileges", "setuid and file capabilities can raise the process's privileges", c.keyLocation("security_opt"))
	f.Unknown = c.NoNewPrivileges == Unknown
	f.Evidence = "no_new_privileges=" + string(c.NoNewPrivileges)
	return []Finding{f}
}

// checkLimits wants a memory and a pids limit; for Kubernetes, whose pod
// has no pids field (the kubelet's podPidsLimit is node configuration), a
// memory and a CPU limit, the two resources.limits that bound a runaway.
func checkLimits(c *Container, o *Options) []Finding {
	var missing []string
	if c.MemoryLimit <= 0 {
		missing = append(missing, "memory")
	}
	switch {
	case c.Source == SourceKube && c.CPULimit <= 0:
		missing = append(missing, "cpu")
	case c.Source != SourceKube && c.PidsLimit <= 0:
		missing = append(missing, "pids")
	}
	if len(missing) == 0 {
		return nil
	}
	f := newFinding(CodeNoLimits, strings.Join(missing, ", "), "no "+strings.Join(missing, " or ")+" limit is set", c.keyLocation("mem_limit"))
	f.Evidence = fmt.Sprintf("memory=%d pids=%d", c.MemoryLimit, c.PidsLimit)
	return []Finding{f}
}

func checkSeccomp(c *Container, o *Options) []Finding {
	loc := c.keyLocation("security_opt")
	s := c.Seccomp
	switch {
	case c.Privileged || s.Mode == "default":
		return nil
	case s.Mode == "unconfined":
		subject := "seccomp=unconfined"
		switch c.Source {
		case "oci":
			subject = "linux.seccomp absent"
		case SourceKube:
			subject = "seccompProfile " + s.Profile
		}
		f := newFinding(CodeSeccompUnconfined, subject, "no seccomp filter: every syscall reaches the kernel", loc)
		f.Evidence = "seccomp mode unconfined"
		return []Finding{f}
	case s.Mode == "custom" && s.Error != "":
		f := newFinding(CodeSeccompWeak, orDefault(s.Profile, "custom profile"), "the custom seccomp profile cannot be read: "+s.Error, loc)
		f.Unknown = true
		return []Finding{f}
	case s.Mode == "custom" && !s.WeakKnown:
		f := newFinding(CodeSeccompWeak, orDefault(s.Profile, "custom profile"), "the custom seccomp profile was not compared with agentbox's", loc)
		f.Unknown = true
		return []Finding{f}
	case s.Mode == "custom" && len(s.Weak) > 0:
		f := newFinding(CodeSeccompWeak, orDefault(s.Profile, "custom profile"),
			fmt.Sprintf("the profile allows %d syscalls that agentbox denies: %s", len(s.Weak), strings.Join(s.Weak, ", ")), loc)
		f.Evidence = "allowed: " + strings.Join(s.Weak, ",")
		return []Finding{f}
	case s.Mode == "unknown" || s.Mode == "":
		f := newFinding(CodeSeccompUnconfined, "seccomp", "the seccomp setting cannot be read from this source", loc)
		f.Unknown = true
		return []Finding{f}
	}
	return nil
}

func checkAppArmor(c *Container, o *Options) []Finding {
	if c.Privileged || c.AppArmor != "unconfined" {
		return nil
	}
	f := newFinding(CodeAppArmor, "apparmor=unconfined", "the process runs without an AppArmor profile", c.keyLocation("security_opt"))
	f.Evidence = "apparmor=unconfined"
	return []Finding{f}
}

func checkSELinux(c *Container, o *Options) []Finding {
	if c.Privileged {
		return nil
	}
	for _, l := range c.SELinux {
		if l == "disable" || strings.Contains(l, "spc_t") || strings.Contains(l, "unconfined_t") {
			f := newFinding(CodeSELinux, "label="+l, "SELinux separation is off for this container", c.keyLocation("security_opt"))
			f.Evidence = "selinux " + l
			return []Finding{f}
		}
	}
	return nil
}

func checkProcMasks(c *Container, o *Options) []Finding {
	loc := c.keyLocation("security_opt")
	if c.Privileged {
		return nil
	}
	if c.SystemPaths == "unconfined" {
		f := newFinding(CodeProcMasks, "systempaths=unconfined", "every masked and read-only /proc and /sys path is exposed", loc)
		f.Evidence = "systempaths=unconfined"
		return []Finding{f}
	}
	if !c.PathsKnown || !c.ProcMounted {
		return nil
	}
	missing := append(missingFrom(MaskedPaths, c.MaskedPaths, c.ReadonlyPaths), missingFrom(ReadonlyPaths, c.ReadonlyPaths, c.MaskedPaths)...)
	if len(missing) == 0 {
		return nil
	}
	f := newFinding(CodeProcMasks, fmt.Sprintf("%d of %d masked paths", len(missing), len(MaskedPaths)+len(ReadonlyPaths)), "these paths are neither masked nor read-only: "+strings.Join(missing, ", "), loc)
	f.Evidence = fmt.Sprintf("masked=%d readonly=%d", len(c.MaskedPaths), len(c.ReadonlyPaths))
	return []Finding{f}
}

// missingFrom returns the paths of want that neither have nor stronger
// covers (a masked path is also read-only).
func missingFrom(want, have, stronger []string) []string {
	set := wordSet(append(append([]string(nil), have...), stronger...)...)
	var out []string
	for _, p := range want {
		if !set[p] {
			out = append(out, p)
		}
	}
	return out
}

func checkHostNamespaces(c *Container, o *Options) []Finding {
	var out []Finding
	for _, ns := range []struct{ mode, code, key string }{
		{c.PidMode, CodeHostPID, "pid"}, {c.IpcMode, CodeHostIPC, "ipc"}, {c.UTSMode, CodeHostUTS, "uts"},
	} {
		if ns.mode == "host" {
			f := newFinding(ns.code, ns.key+": host", "the container shares the host's "+strings.ToUpper(ns.key)+" namespace", c.keyLocation(ns.key))
			f.Evidence = ns.key + "=host"
			out = append(out, f)
		}
	}
	return out
}

func checkDevices(c *Container, o *Options) []Finding {
	if c.Privileged {
		return nil
	}
	var out []Finding
	for _, d := range c.Devices {
		f := newFinding(CodeDevices, d.Host, fmt.Sprintf("host device %s is available as %s", d.Host, orDefault(d.Container, d.Host)), c.keyLocation("devices"))
		f.Evidence = fmt.Sprintf("device %s:%s:%s", d.Host, d.Container, d.Permissions)
		out = append(out, f)
	}
	for _, r := range c.DeviceRules {
		f := newFinding(CodeDevices, "device rule "+r, "a device cgroup rule lets the container use host devices it can create", c.keyLocation("device_cgroup_rules"))
		f.Evidence = "device_cgroup_rule " + r
		out = append(out, f)
	}
	return out
}

func checkSysctls(c *Container, o *Options) []Finding {
	names := make([]string, 0, len(c.Sysctls))
	for k := range c.Sysctls {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Finding
	for _, k := range names {
		f := newFinding(CodeSysctls, k+"="+c.Sysctls[k], "the kernel parameter "+k+" is changed for this container", c.keyLocation("sysctls"))
		f.Evidence = "sysctl " + k + "=" + c.Sysctls[k]
		out = append(out, f)
	}
	return out
}

func checkUserNS(c *Container, o *Options) []Finding {
	if c.UserNS == Yes || RunsAsRoot(c.User) {
		return nil // root without a user namespace is runs-as-root
	}
	f := newFinding(CodeNoUserNS, "userns", "the container's uids are the host's uids", c.keyLocation("userns_mode"))
	if c.UserNS == Unknown {
		f.Detail = "whether the container has a user namespace cannot be read from this source"
		f.Unknown = true
	}
	f.Evidence = "userns=" + string(c.UserNS)
	return []Finding{f}
}
