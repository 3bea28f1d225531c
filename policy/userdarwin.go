package policy

import (
	"slices"
	"strings"
)

// OSDarwin is Host.OS on macOS.
const OSDarwin = "darwin"

// On macOS a TargetUser plan (launcher/user_darwin.go) has other layers
// than Linux's: no Landlock, no seccomp filter, no cgroup, no namespace to
// bind protected paths in; the account _agentbox runs the agent under a
// Seatbelt profile (sandbox-exec, rendered by account.RenderSeatbelt)
// behind a pf anchor keyed on its uid (account.RenderPFAnchor). Its
// residuals say so, and they take out of the self-test the probes that try
// what xnu does not have (Residual.Unprobed), each with the layer that
// stands in for it and the probe that checks that layer, instead of
// letting them answer UNKNOWN ("not Linux") or "absent".

// The residual codes of a darwin TargetUser plan.
const (
	// ResidualDarwinShared: no namespace at all, and what the account's
	// uid, Seatbelt and pf do instead.
	ResidualDarwinShared = "darwin-user-shared"
	// ResidualDarwinSyscalls: the Linux system calls the kernel probes try.
	ResidualDarwinSyscalls = "darwin-linux-syscalls-absent"
	// ResidualDarwinNoSeccomp: no capabilities, seccomp, no_new_privs or
	// user namespace; uid 0 is the only privilege.
	ResidualDarwinNoSeccomp = "darwin-no-seccomp-capabilities"
	// ResidualDarwinNoProcfs: the procfs and sysfs files of the filesystem
	// probes.
	ResidualDarwinNoProcfs = "darwin-no-procfs-sysfs"
	// ResidualDarwinFence: the probes stand under Seatbelt, which refuses
	// the fence's connections before pf sees them.
	ResidualDarwinFence = "darwin-fence-behind-seatbelt"
	// ResidualDarwinDNS: mDNSResponder resolves on the account's behalf.
	ResidualDarwinDNS = "darwin-dns-mdnsresponder"
)

// DarwinSharedProbes report ALLOW on darwin, where the agent shares
// everything a namespace would hide, and run there all the same.
var DarwinSharedProbes = []string{"host-home-not-mounted", "metadata-unreachable"}

// DarwinSharedUnprobed look for a namespace through Linux's procfs, which
// macOS does not have.
var DarwinSharedUnprobed = []string{
	"host-pids-invisible", "device-nodes-minimal", "only-loopback", "no-default-route",
	"host-abstract-socket-unreachable", "container-socket-absent",
}

// DarwinSyscallUnprobed try system calls only Linux has.
var DarwinSyscallUnprobed = []string{
	"mount-tmpfs-denied", "fsopen-denied", "umount-denied", "pivot-root-denied",
	"unshare-user-denied", "unshare-mount-denied", "unshare-net-denied", "setns-denied",
	"keyctl-denied", "add-key-denied", "bpf-denied", "perf-event-open-denied",
	"userfaultfd-denied", "io-uring-setup-denied", "init-module-denied", "finit-module-denied",
	"kexec-load-denied", "open-by-handle-at-denied", "ptrace-pid1-denied",
	"process-vm-readv-pid1-denied", "packet-socket-denied", "netlink-non-route-denied",
	"prlimit-pid1-denied", "kernel-as-planned",
}

// DarwinNoSeccompUnprobed read Linux's /proc/self/status and uid_map.
var DarwinNoSeccompUnprobed = []string{
	"capabilities-zero", "seccomp-filter", "no-new-privs", "setuid-gain-denied", "uid-map-non-identity",
}

// DarwinProcfsUnprobed open files of Linux's procfs and sysfs.
var DarwinProcfsUnprobed = []string{
	"core-pattern-not-writable", "sysrq-trigger-not-writable", "uevent-helper-not-writable",
	"release-agent-not-writable", "kcore-unreadable", "proc-keys-unreadable",
	"kernel-cmdline-hidden", "kallsyms-addresses-hidden",
}

// DarwinProbes are the probes only a darwin self-test runs (selftest's
// darwin catalog), named by the residuals as the layers' checks.
var DarwinProbes = []string{"seatbelt-write-denied", "bpf-device-denied", "mdnsresponder-unreachable"}

// darwin reports whether the plan is for TargetUser on macOS.
func (r *resolver) darwin() bool { return r.user() && r.h.OS == OSDarwin }

// darwinPlan drops what a darwin plan does not have (a seccomp profile, a
// cgroup and its limits, an init of root's: the starter is the account's
// own process from the start) and records the darwin residuals.
func (r *resolver) darwinPlan() {
	p := r.plan
	p.Seccomp, p.CgroupsPath, p.Limits, p.Identity.Init = "", "", nil, InitIdentity{}
	p.Residuals = slices.DeleteFunc(p.Residuals, func(x Residual) bool { return x.Code == "no-resource-limits" })
	clone := func(s []string) []string { return append([]string(nil), s...) }
	p.Residuals = append(p.Residuals,
		Residual{
			Code: ResidualDarwinShared,
			Reason: "--isolation user on macOS has no namespace of any kind: the agent sees the host's processes, mounts, devices, interfaces and routes. " +
				"What keeps it in is the account _agentbox's uid (file permissions, the workspace granted by an ACL entry for the run), the Seatbelt profile it runs under (sandbox-exec: deny by default; writes only to the run's home, TMPDIR and the workspace, the protected paths denied; no connect but TCP to localhost on the gateway's port) " +
				"and the pf anchor com.apple/agentbox on its uid (TCP to the gateway's port on 127.0.0.1 and ::1; every other TCP and UDP packet blocked). " +
				"host-home-not-mounted and metadata-unreachable (a route lookup, no packet) find the host's home and routes and say ALLOW. Not run, since they read Linux's procfs: host-pids-invisible (the host's processes are visible; kill-pid1-denied probes that the agent can signal none but the account's own), " +
				"device-nodes-minimal (devfs is the host's; the profile opens only /dev/null, zero, random, urandom, tty, ptmx and the run's pty, and bpf-device-denied probes the link layer's nodes), only-loopback and no-default-route (the interfaces and routes are the host's; the fence closes them: internet-unreachable, dns-unresolvable), " +
				"host-abstract-socket-unreachable and container-socket-absent (darwin has no abstract unix sockets and no /proc/net/unix; the profile allows connecting to no unix socket: workspace-socket-unreachable, mdnsresponder-unreachable)",
			Probes:   clone(DarwinSharedProbes),
			Unprobed: clone(DarwinSharedUnprobed),
		},
		Residual{
			Code: ResidualDarwinSyscalls,
			Reason: "xnu has none of the Linux system calls these probes try (Linux's mount and umount2, the new mount API, pivot_root, namespaces and setns, keyrings, bpf(2), perf_event_open, userfaultfd, io_uring, module and kexec loading, open_by_handle_at, process_vm_readv, PTRACE_SEIZE, AF_PACKET, netlink, prlimit), " +
				"and the plan chooses no kernel (kernel-as-planned): the agent runs on the host's xnu. macOS's counterparts are root's: mounting, loading kernel extensions, reading another process's memory (task_for_pid) and tracing it (PT_ATTACH) need root or an entitlement the account has not; " +
				"the link layer is /dev/bpf*, which the profile does not let it open (bpf-device-denied); signalling another user's process is refused (kill-pid1-denied, against launchd); raw IP sockets (raw-socket-denied), block devices (mknod-block-denied) and chroot (chroot-denied) are probed as on Linux; " +
				"that the agent-to-be holds only the account's ids is the host's check (host-account-ids)",
			Unprobed: clone(DarwinSyscallUnprobed),
		},
		Residual{
			Code: ResidualDarwinNoSeccomp,
			Reason: "xnu has no capability sets, no seccomp, no no_new_privs and no user namespaces: privilege is uid 0, and the host checks that the starter's real, effective and saved uids and gids and its groups are the account's (host-account-ids). " +
				"The seccomp filter's place is taken by the Seatbelt profile, which refuses what it does not allow with EPERM (seatbelt-write-denied); it mediates operations (files, sockets, signals, mach services, sysctls), not system calls, so the rest of xnu's system-call surface is open to the agent. " +
				"Without no_new_privs the system's setuid-root programs (sudo, su, login) stay executable by the agent; they raise privileges only with a credential, and the account has no password, no login shell and no admin or staff membership (agentbox doctor's darwin-account check; agentbox audit --user _agentbox lists its sudo rights)",
			Unprobed: clone(DarwinNoSeccompUnprobed),
		},
		Residual{
			Code: ResidualDarwinNoProcfs,
			Reason: "macOS has no /proc and no /sys: the files these probes open do not exist, so they could only say absent. xnu's counterparts are sysctls: those that change the kernel (kern.corefile and the like) are root's to write, those that describe it (kern.bootargs, kern.version) stay readable, as the profile allows sysctl-read; " +
				"no device node exposes the kernel's memory. A write anywhere but the run's home, TMPDIR and the workspace is the profile's to refuse (seatbelt-write-denied)",
			Unprobed: clone(DarwinProcfsUnprobed),
		},
		Residual{
			Code: ResidualDarwinFence,
			Reason: "the probes run under the same Seatbelt profile as the agent, which refuses a connect to any port but the gateway's (EPERM) before pf sees the packet: a passing internet-unreachable or host-loopback-unreachable shows that the profile holds, not that pf's anchor does. " +
				"The launch checks that the anchor holds the account's rules after loading it (pfctl -a com.apple/agentbox -s rules), and agentbox doctor that pf is enabled and that the main ruleset evaluates the com.apple anchors (darwin-pf, darwin-pf-anchors); pf attributes only TCP and UDP to a user, so ICMP is the profile's alone",
		},
		Residual{
			Code: ResidualDarwinDNS,
			Reason: "on macOS programs resolve names through mDNSResponder, a daemon of its own user that sends the queries on the account's behalf: pf's user rules never see them, so the fence alone does not close DNS. " +
				"The profile denies the daemon's socket (/private/var/run/mDNSResponder) and its mach services (com.apple.dnssd.service, com.apple.mDNSResponder); mdnsresponder-unreachable probes the socket, dns-unresolvable a query of its own over UDP. " +
				"Whether the mach services the profile allows (opendirectoryd's libinfo, which answers user and group lookups) resolve host names for it is not probed",
		},
		Residual{
			Code:   "no-resource-limits",
			Reason: "macOS has no cgroups: the policy's memory, pid and CPU limits are not applied to the agent, which has the account's launchd limits (ulimit) only",
		},
	)
	// The run's record keeps a residual's code and reason: the reason
	// names the probes it takes out.
	for i, res := range p.Residuals {
		if len(res.Unprobed) > 0 && res.Code != ResidualDarwinShared { // that one names each in its words
			p.Residuals[i].Reason += "; not run: " + strings.Join(res.Unprobed, ", ")
		}
	}
}

// Unprobed is every probe the plan's residuals take out of its self-test,
// in the residuals' order; nil when the self-test runs every probe.
func (p *Plan) Unprobed() []string {
	var out []string
	for _, r := range p.Residuals {
		out = append(out, r.Unprobed...)
	}
	return out
}
