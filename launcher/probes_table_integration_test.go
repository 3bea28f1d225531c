//go:build integration

package launcher

import (
	"testing"

	"github.com/agentbox/agentbox/selftest"
)

// Every probe is tested both ways (issue 4): in the hardened sandbox it
// must get its expected decision, and where its layer is removed it must
// get the opposite one. probeTable says, for every probe of the catalog
// and every host check, where that second run happens and which weakening
// flips it. A probe missing here fails TestProbeTableCoversCatalog.

// flipSite is where a probe's weakened side is shown.
type flipSite string

const (
	// siteKernel is kernelSandbox: capabilities, seccomp, no_new_privs,
	// host root, /proc masks, nosuid, the root's read-only mount, devices,
	// the UTS namespace and sysfs's read-only mount weakened, and init's
	// children keeping init's ids and capabilities.
	siteKernel flipSite = "kernel sandbox"
	// siteBoundary is boundarySandbox: home, engine socket, environment,
	// the host's procfs, /usr, and loopback weakened, and init running as
	// the agent's uid.
	siteBoundary flipSite = "boundary sandbox"
	// siteNetwork is networkSandbox: the launcher's own network namespace,
	// with a route to a test host.
	siteNetwork flipSite = "network sandbox"
	// siteHost is `agentbox-init --probe` run as root on the host, for the
	// probes that no sandbox can flip: the kernel refuses them in every
	// user namespace but the initial one.
	siteHost flipSite = "host, as root"
)

// probeRow is one probe's weakened side.
type probeRow struct {
	site flipSite
	// how names the weakening that flips the probe; for siteHost, why no
	// sandbox can.
	how string
	// object, when set, is a glob for the kernel object the probe checks.
	// A kernel built without it (no match on the host) shows DENY "absent"
	// everywhere; standIn then shows the ALLOW side, or, for a syscall the
	// kernel lacks, nothing can.
	object string
	// standIn is a file at the probe's path that the host run creates on a
	// tmpfs over cover, in a private mount namespace, when object is absent.
	standIn standIn
	// observed, when set, must be among the weakened result's observations:
	// the probe flipped for the reason the row gives.
	observed string
	// also are further weakened sides of a probe that checks several
	// things, each shown on its own.
	also []alsoFlip
}

// alsoFlip is one further weakened side of a probe.
type alsoFlip struct {
	site     flipSite
	how      string
	observed string
}

type standIn struct{ cover, file string }

var probeTable = map[string]probeRow{
	// The boundary users know.
	"host-home-not-mounted": {site: siteBoundary, how: "the invoking user's home bound read-only (--ro-bind, accepted)"},
	"planted-secret-unreadable": {
		site: siteBoundary, how: "the launcher's canary variable let in (--env AGENTBOX_CANARY_*)", observed: "env-present",
		also: []alsoFlip{{site: siteKernel, how: "the home, which holds the canary file, bound read-only and the sandbox running as its owner", observed: "readable"}},
	},
	"container-socket-absent": {site: siteBoundary, how: "a unix socket named docker.sock bound read-only (--ro-bind, accepted)"},
	"environment-is-clean":    {site: siteBoundary, how: "a credential-shaped variable let in (--env, accepted)"},
	"internet-unreachable":    {site: siteNetwork, how: "a default route to the test host, the outside target there"},
	"gateway-reachable":       {site: siteBoundary, how: "positive control: a network namespace whose lo is down makes it DENY"},

	// The kernel surface.
	"mount-tmpfs-denied":           {site: siteKernel, how: "CAP_SYS_ADMIN over the mount namespace, no seccomp filter"},
	"fsopen-denied":                {site: siteKernel, how: "CAP_SYS_ADMIN over the mount namespace, no seccomp filter"},
	"umount-denied":                {site: siteKernel, how: "CAP_SYS_ADMIN over the mount namespace, no seccomp filter"},
	"pivot-root-denied":            {site: siteKernel, how: "CAP_SYS_ADMIN over the mount namespace, no seccomp filter"},
	"unshare-user-denied":          {site: siteKernel, how: "no seccomp filter (a user namespace needs no capability)"},
	"unshare-mount-denied":         {site: siteKernel, how: "CAP_SYS_ADMIN in the sandbox's user namespace, no seccomp filter"},
	"unshare-net-denied":           {site: siteKernel, how: "CAP_SYS_ADMIN in the sandbox's user namespace, no seccomp filter"},
	"setns-denied":                 {site: siteKernel, how: "CAP_SYS_ADMIN over the network namespace, no seccomp filter"},
	"keyctl-denied":                {site: siteKernel, how: "no seccomp filter"},
	"add-key-denied":               {site: siteKernel, how: "no seccomp filter"},
	"perf-event-open-denied":       {site: siteKernel, how: "no seccomp filter (kernel.perf_event_paranoid <= 2 lets a process count its own user-space events)"},
	"userfaultfd-denied":           {site: siteKernel, how: "no seccomp filter (user-mode-only needs no privilege)"},
	"io-uring-setup-denied":        {site: siteKernel, how: "no seccomp filter (kernel.io_uring_disabled = 0)"},
	"ptrace-pid1-denied":           {site: siteKernel, how: "CAP_SYS_PTRACE (init is not dumpable), no seccomp filter"},
	"process-vm-readv-pid1-denied": {site: siteKernel, how: "CAP_SYS_PTRACE (init is not dumpable), no seccomp filter"},
	"packet-socket-denied":         {site: siteKernel, how: "CAP_NET_RAW over the network namespace"},
	"raw-socket-denied":            {site: siteKernel, how: "CAP_NET_RAW over the network namespace"},
	"netlink-non-route-denied":     {site: siteKernel, how: "no seccomp filter (any user may open a netlink socket of any protocol)", observed: "opened"},
	"chroot-denied":                {site: siteKernel, how: "CAP_SYS_CHROOT"},
	"kernel-as-planned":            {site: siteBoundary, how: "init expects gVisor's Sentry; runc runs it on the host kernel", observed: "host-kernel"},
	"capabilities-zero":            {site: siteKernel, how: "every capability in every set, kept by init's children (no switch to the agent's ids)"},
	"seccomp-filter":               {site: siteKernel, how: "no seccomp filter"},
	"no-new-privs":                 {site: siteKernel, how: "no_new_privs unset"},
	"uid-map-non-identity":         {site: siteKernel, how: "host root mapped to the sandbox's root"},
	"setuid-gain-denied":           {site: siteKernel, how: "no_new_privs unset, host root mapped (setuid-root files are owned by 0 inside), mounts without nosuid"},
	"init-module-denied": {
		site: siteHost, object: "/proc/modules",
		how: "CAP_SYS_MODULE is checked in the initial user namespace",
	},
	"finit-module-denied": {
		site: siteHost, object: "/proc/modules",
		how: "CAP_SYS_MODULE is checked in the initial user namespace",
	},
	"kexec-load-denied": {
		site: siteHost, object: "/sys/kernel/kexec_loaded",
		how: "CAP_SYS_BOOT is checked in the initial user namespace",
	},
	"bpf-denied": {
		site: siteHost,
		how:  "BPF_PROG_GET_NEXT_ID needs CAP_SYS_ADMIN in the initial user namespace",
	},
	"open-by-handle-at-denied": {
		site: siteHost,
		how:  "CAP_DAC_READ_SEARCH in the initial user namespace, or (Linux 6.10+) a mount of the caller's own namespace with nothing locked below it, which the sandbox's root is not",
	},
	"mknod-block-denied": {
		site: siteHost,
		how:  "CAP_MKNOD is checked in the initial user namespace",
	},

	// The filesystem.
	"root-not-writable":         {site: siteKernel, how: "the root mounted read-write, the sandbox running as host root (the root directory's owner)"},
	"etc-not-writable":          {site: siteKernel, how: "the root mounted read-write, the sandbox running as host root (the owner of the root's /etc)"},
	"usr-not-writable":          {site: siteBoundary, how: "a world-writable tmpfs in place of the host's /usr (the host's own /usr is never made writable)"},
	"core-pattern-not-writable": {site: siteKernel, how: "/proc/sys not read-only, the sandbox running as host root (kernel sysctls are writable by host root only)"},
	"sysrq-trigger-not-writable": {
		site: siteKernel, how: "/proc/sysrq-trigger not read-only, the sandbox running as host root",
		object: "/proc/sysrq-trigger", standIn: standIn{cover: "/proc", file: "/proc/sysrq-trigger"},
	},
	"uevent-helper-not-writable": {
		site: siteKernel, how: "sysfs mounted read-write, the sandbox running as host root",
		object: "/sys/kernel/uevent_helper", standIn: standIn{cover: "/sys/kernel", file: "/sys/kernel/uevent_helper"},
	},
	"release-agent-not-writable": {
		site:   siteHost,
		how:    "release_agent exists only at the root of a cgroup v1 hierarchy, and a sandbox's cgroup namespace roots its view at its own cgroup",
		object: "/sys/fs/cgroup/*/release_agent", standIn: standIn{cover: "/sys/fs/cgroup", file: "/sys/fs/cgroup/agentbox-test/release_agent"},
	},
	"kcore-unreadable": {
		site: siteHost, how: "opening /proc/kcore needs CAP_SYS_RAWIO in the initial user namespace",
		object: "/proc/kcore", standIn: standIn{cover: "/proc", file: "/proc/kcore"},
	},
	"proc-keys-unreadable": {site: siteKernel, how: "/proc/keys not masked"},
	"kernel-cmdline-hidden": {
		site: siteKernel, how: "/proc/cmdline, /proc/bootconfig and /proc/config.gz not masked (the host's kernel command line shows)", observed: "readable",
	},
	"kallsyms-addresses-hidden": {
		site: siteHost,
		how:  "unmasked, /proc/kallsyms shows addresses only with CAP_SYSLOG in the initial user namespace (kernel.perf_event_paranoid >= 2)",
	},
	"device-nodes-minimal": {site: siteKernel, how: "the host's /dev/kmsg added to the sandbox's devices"},

	// Processes.
	"host-pids-invisible": {site: siteBoundary, how: "the host's procfs bound in"},
	"prlimit-pid1-denied": {
		site: siteBoundary, how: "init running as the agent's uid, without capabilities (the layout before the uid split)", observed: "limits-writable",
		also: []alsoFlip{{site: siteKernel, how: "CAP_SYS_RESOURCE, and init's uid 0 kept by its children", observed: "limits-writable"}},
	},
	"kill-pid1-denied": {
		site: siteBoundary, how: "init running as the agent's uid, without capabilities (the probes run outside the agent's Landlock domain)", observed: "signal-allowed",
		also: []alsoFlip{{site: siteKernel, how: "CAP_KILL, and init's uid 0 kept by its children", observed: "signal-allowed"}},
	},

	// The network.
	"only-loopback":                    {site: siteNetwork, how: "eth0 of the test network"},
	"no-default-route":                 {site: siteNetwork, how: "a default route via the test host"},
	"dns-unresolvable":                 {site: siteNetwork, how: "a DNS responder on the test host, the resolver target there"},
	"host-loopback-unreachable":        {site: siteNetwork, how: "the launcher's network namespace shared, where its loopback canary listens"},
	"host-abstract-socket-unreachable": {site: siteNetwork, how: "the launcher's network namespace shared, which holds its abstract socket canary"},
	"metadata-unreachable":             {site: siteNetwork, how: "a default route to the test host, the metadata target there"},
	"workspace-socket-unreachable":     {site: siteBoundary, how: "the empty files bound over the workspace's sockets dropped from the bundle", observed: "reached-canary"},

	// The launcher's verification from the host.
	"host-uid-map":           {site: siteKernel, how: "host root mapped to the sandbox's root"},
	"host-capabilities":      {site: siteKernel, how: "every capability in every set, kept by init's child that becomes the agent"},
	"host-no-new-privs":      {site: siteKernel, how: "no_new_privs unset"},
	"host-seccomp":           {site: siteKernel, how: "no seccomp filter"},
	"host-namespaces":        {site: siteKernel, how: "the host's UTS namespace shared"},
	"host-mounts":            {site: siteBoundary, how: "the invoking user's home bound read-only"},
	"host-init-uid-separate": {site: siteBoundary, how: "init running as the agent's uid"},
}

// hostCheckNames are the launcher's host-side checks, by name.
func hostCheckNames() []string {
	var names []string
	for _, r := range selftest.VerifyHost("/nonexistent", selftest.SandboxPIDs{}, selftest.HostState{}) {
		names = append(names, r.Probe)
	}
	return names
}

// expectations returns every probe and host check with its hardened
// decision: the catalog's Expect, DENY for host checks.
func expectations() map[string]selftest.Decision {
	want := map[string]selftest.Decision{}
	for _, p := range selftest.Catalog() {
		want[p.Name] = p.Expect
	}
	for _, n := range hostCheckNames() {
		want[n] = selftest.Deny
	}
	return want
}

func TestProbeTableCoversCatalog(t *testing.T) {
	want := expectations()
	if len(hostCheckNames()) == 0 {
		t.Fatal("VerifyHost names no host check")
	}
	for name := range want {
		row, ok := probeTable[name]
		switch {
		case !ok:
			t.Errorf("%s is not in probeTable: say where its weakened side is shown and how", name)
		case row.how == "":
			t.Errorf("%s: no weakening or reason given", name)
		case !knownSite(row.site):
			t.Errorf("%s: unknown site %q", name, row.site)
		case row.standIn.file != "" && row.object == "":
			t.Errorf("%s: a stand-in is only for a kernel object that may be absent; name it", name)
		}
		for _, a := range row.also {
			if !knownSite(a.site) || a.site == siteHost || a.how == "" {
				t.Errorf("%s: a further side needs a sandbox site and a weakening, not %+v", name, a)
			}
		}
	}
	for name := range probeTable {
		if _, ok := want[name]; !ok {
			t.Errorf("probeTable names %s, which is neither a probe nor a host check", name)
		}
	}
}

func knownSite(s flipSite) bool {
	return s == siteKernel || s == siteBoundary || s == siteNetwork || s == siteHost
}
