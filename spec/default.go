package spec

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Namespaces are the namespaces every sandbox gets.
var Namespaces = []specs.LinuxNamespaceType{
	specs.PIDNamespace, specs.NetworkNamespace, specs.IPCNamespace, specs.UTSNamespace,
	specs.MountNamespace, specs.UserNamespace, specs.CgroupNamespace,
}

// MaskedPaths hide kernel information and interfaces: Docker's defaults
// plus /proc/kallsyms.
var MaskedPaths = []string{
	"/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kallsyms", "/proc/kcore",
	"/proc/keys", "/proc/latency_stats", "/proc/sched_debug", "/proc/scsi",
	"/proc/timer_list", "/proc/timer_stats", "/sys/devices/virtual/powercap", "/sys/firmware",
}

// ReadonlyPaths are Docker's read-only /proc paths.
var ReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}

// OCIVersion is the runtime-spec version the configs declare: the oldest
// that has every field agentbox sets, so that the runtimes distributions
// ship accept it (crun 1.8 refuses "1.3.0"; runc 1.1 reports 1.0.2-dev).
const OCIVersion = "1.0.2"

// Default returns the hardened baseline: nothing runs yet (no args), no
// capability, no privilege gain, a read-only root at "rootfs", all
// namespaces new, and only the kernel file systems a process needs.
func Default() *specs.Spec {
	return &specs.Spec{
		Version:  OCIVersion,
		Root:     &specs.Root{Path: "rootfs", Readonly: true},
		Hostname: "agentbox",
		Process: &specs.Process{
			User:            specs.User{UID: 65534, GID: 65534},
			Cwd:             "/",
			Capabilities:    noCapabilities(),
			NoNewPrivileges: true,
			// A core dump would land in the workspace. Other limits are
			// inherited: raising one needs a privilege the launcher may lack.
			Rlimits: []specs.POSIXRlimit{{Type: "RLIMIT_CORE", Hard: 0, Soft: 0}},
		},
		Mounts: baseMounts(),
		Linux: &specs.Linux{
			Namespaces:    namespaces(),
			MaskedPaths:   append([]string(nil), MaskedPaths...),
			ReadonlyPaths: append([]string(nil), ReadonlyPaths...),
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
		},
	}
}

func noCapabilities() *specs.LinuxCapabilities {
	return &specs.LinuxCapabilities{
		Bounding: []string{}, Effective: []string{}, Inheritable: []string{},
		Permitted: []string{}, Ambient: []string{},
	}
}

func namespaces() []specs.LinuxNamespace {
	out := make([]specs.LinuxNamespace, len(Namespaces))
	for i, t := range Namespaces {
		out[i] = specs.LinuxNamespace{Type: t}
	}
	return out
}

// baseMounts are the kernel file systems: /proc, a tmpfs /dev with pts,
// shm and mqueue, /sys and the sandbox's own cgroup, both read-only.
func baseMounts() []specs.Mount {
	return []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "noexec", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
	}
}
