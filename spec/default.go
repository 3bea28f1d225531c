package spec

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

// Namespaces are the namespaces every sandbox gets.
var Namespaces = []specs.LinuxNamespaceType{
	specs.PIDNamespace, specs.NetworkNamespace, specs.IPCNamespace, specs.UTSNamespace,
	specs.MountNamespace, specs.UserNamespace, specs.CgroupNamespace,
}

// KernelPath is a /proc or /sys path that every sandbox gets masked (the
// runtime puts /dev/null on a file and an empty read-only tmpfs on a
// directory; a path the kernel lacks is skipped) or mounted read-only.
type KernelPath struct {
	// Path is the path inside the sandbox.
	Path string
	// Engines is true when every engine's default (Docker, Podman,
	// containerd) does the same, so that a container without it has lost a
	// default: the audit expects these of any container. False means
	// agentbox goes further than some engine.
	Engines bool
	// Reason says what the path would show or allow.
	Reason string
}

// MaskedPaths hide host facts and kernel interfaces: the engines' defaults,
// the boot facts (command line, boot and build configuration) and more. A
// sandbox's own processes stay visible: /proc/PID/cmdline and /proc/self
// are not touched. Considered and left readable: /proc/modules and
// /sys/module (module addresses are zeroed without CAP_SYSLOG, and
// libapparmor reads /sys/module to tell whether AppArmor is on),
// /proc/version (what uname says), /proc/cpuinfo and /proc/meminfo
// (runtimes size thread pools and heaps from them) and the DMI strings
// under /sys/devices/virtual/dmi (vendor and model; serials and the
// product UUID are readable by host root only).
var MaskedPaths = []KernelPath{
	{"/proc/acpi", true, "the host firmware's ACPI interfaces"},
	{"/proc/asound", false, "the host's sound cards and their controls"},
	{"/proc/bootconfig", false, "the boot configuration (Linux 5.5+), kernel command-line options by another name"},
	{"/proc/cmdline", false, "the kernel command line: root= UUIDs, boot options and, on some hosts, secrets (disk keys, cloud-init seeds, tokens)"},
	{"/proc/config.gz", false, "the kernel's build configuration: which hardening options and subsystems the host kernel has"},
	{"/proc/interrupts", false, "interrupt counts of the host's devices per CPU, a side channel and a hardware inventory"},
	{"/proc/kallsyms", false, "the kernel symbol table; with addresses it defeats KASLR"},
	{"/proc/kcore", true, "the host's physical memory as an ELF core file"},
	{"/proc/keys", true, "the key retention service's keys the caller can see; keys are not namespaced"},
	{"/proc/latency_stats", true, "latency accounting of every task on the host"},
	{"/proc/sched_debug", true, "the scheduler's run queues: every task on the host, by name and pid"},
	{"/proc/scsi", true, "the host's SCSI devices and, on old kernels, a bus rescan"},
	{"/proc/timer_list", true, "every pending kernel timer with the task that set it, host-wide"},
	{"/proc/timer_stats", true, "timer statistics of every process (kernels before 4.11)"},
	{"/sys/devices/virtual/powercap", false, "RAPL energy counters, the PLATYPUS power side channel (CVE-2020-8694)"},
	{"/sys/firmware", true, "the host firmware's ACPI tables, SMBIOS data, EFI variables and device tree"},
}

// ReadonlyPaths are the engines' read-only /proc paths. /proc/sys stays
// readable, not masked: programs read sysctls (Go reads
// net.core.somaxconn, allocators vm.overcommit_memory).
var ReadonlyPaths = []KernelPath{
	{"/proc/bus", true, "PCI and USB device access of the host"},
	{"/proc/fs", true, "filesystem driver controls (nfsd, ext4)"},
	{"/proc/irq", true, "interrupt affinity of the host's devices"},
	{"/proc/sys", true, "sysctls: the namespaced ones would otherwise be writable by the sandbox's root"},
	{"/proc/sysrq-trigger", true, "magic SysRq: reboot, crash or kill every process of the host"},
}

// Paths returns the paths of list, in order.
func Paths(list []KernelPath) []string {
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.Path
	}
	return out
}

// EnginePaths returns the paths of list that every engine's default holds
// too, in order.
func EnginePaths(list []KernelPath) []string {
	var out []string
	for _, p := range list {
		if p.Engines {
			out = append(out, p.Path)
		}
	}
	return out
}

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
		Hostname: policy.Hostname,
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
			MaskedPaths:   Paths(MaskedPaths),
			ReadonlyPaths: Paths(ReadonlyPaths),
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
