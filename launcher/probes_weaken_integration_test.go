//go:build integration && linux

package launcher

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// The weakenings below each remove one layer of the hardened spec, on
// purpose, so that the probe watching that layer must report ALLOW. They
// change only the bundle's copy of the spec (launch.weaken), after the
// self-audit passed; the policy-level ones (a home, a socket, a variable)
// go through the policy with a written acceptance instead.

// allCapabilities are the capabilities of Linux 5.9 and later (0 to 40).
var allCapabilities = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

// withAllCapabilities gives the sandbox's processes every capability in
// every set, ambient included, so that they keep them across exec.
func withAllCapabilities(s *specs.Spec) {
	all := slices.Clone(allCapabilities)
	s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: all, Effective: all, Permitted: all, Inheritable: all, Ambient: all}
}

// withoutSeccomp drops the seccomp filter.
func withoutSeccomp(s *specs.Spec) { s.Linux.Seccomp = nil }

// withNewPrivs leaves no_new_privs unset.
func withNewPrivs(s *specs.Spec) { s.Process.NoNewPrivileges = false }

// withHostRoot maps host root to the sandbox's root and runs the sandbox
// as that root: container uid and gid 0 are host 0, the other ids keep
// their host ids. Host files owned by root then show as owned by 0 inside.
func withHostRoot(s *specs.Spec) {
	s.Linux.UIDMappings = mapHostRoot(s.Linux.UIDMappings)
	s.Linux.GIDMappings = mapHostRoot(s.Linux.GIDMappings)
	s.Process.User.UID, s.Process.User.GID = 0, 0
}

func mapHostRoot(m []specs.LinuxIDMapping) []specs.LinuxIDMapping {
	out := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 1}}
	for _, r := range m {
		if r.ContainerID == 0 {
			if r.Size > 1 {
				out = append(out, specs.LinuxIDMapping{ContainerID: 1, HostID: r.HostID + 1, Size: r.Size - 1})
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// withoutProcMasks drops the runtime's masked and read-only /proc and /sys
// paths (/proc/keys, /proc/kallsyms, /proc/sys, …).
func withoutProcMasks(s *specs.Spec) { s.Linux.MaskedPaths, s.Linux.ReadonlyPaths = nil, nil }

// withSuid drops nosuid from every mount.
func withSuid(s *specs.Spec) {
	for i, m := range s.Mounts {
		s.Mounts[i].Options = slices.DeleteFunc(slices.Clone(m.Options), func(o string) bool { return o == "nosuid" })
	}
}

// withWritableRoot mounts the bundle's root read-write. In the host-binds
// default, / and /etc are directories of that root (owned by host root).
func withWritableRoot(s *specs.Spec) { s.Root.Readonly = false }

// withWritableSysfs mounts the sandbox's sysfs read-write.
func withWritableSysfs(s *specs.Spec) {
	for i, m := range s.Mounts {
		if m.Type == "sysfs" {
			s.Mounts[i].Options = slices.DeleteFunc(slices.Clone(m.Options), func(o string) bool { return o == "ro" })
		}
	}
}

// withHostDevice binds the host's /dev/kmsg into /dev; the device cgroup
// still denies opening it, but the node is there.
func withHostDevice(s *specs.Spec) {
	s.Linux.Devices = append(s.Linux.Devices, specs.LinuxDevice{Path: "/dev/kmsg", Type: "c", Major: 1, Minor: 11})
}

// withHostUTS leaves the sandbox in the host's UTS namespace.
func withHostUTS(s *specs.Spec) {
	s.Linux.Namespaces = slices.DeleteFunc(s.Linux.Namespaces, func(n specs.LinuxNamespace) bool { return n.Type == specs.UTSNamespace })
	s.Hostname, s.Domainname = "", ""
}

// withWritableUsr puts a world-writable tmpfs in place of the host's /usr
// (the test never makes the host's own /usr writable).
func withWritableUsr(s *specs.Spec) {
	for i, m := range s.Mounts {
		if m.Destination == "/usr" {
			s.Mounts[i] = specs.Mount{Destination: "/usr", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}}
		}
	}
}

// hostProcDir is where withHostProc shows the host's procfs.
const hostProcDir = "/.agentbox-test-hostproc"

// withHostProc binds the host's procfs (of the host's PID namespace) into
// the sandbox, read-only.
func withHostProc(s *specs.Spec) {
	s.Mounts = append(s.Mounts, specs.Mount{Destination: hostProcDir, Type: "bind", Source: "/proc", Options: []string{"rbind", "nosuid", "nodev", "noexec", "ro"}})
}

// withNetns puts the sandbox in the network namespace at path, which the
// host made. The sandbox's user namespace does not own that namespace and
// so cannot mount a sysfs for it; the host's /sys is bound read-only in its
// place, as rootless runtimes do, and the hook that raises lo is dropped,
// since it could not change an interface there either: the test set up
// that namespace's interfaces itself.
func withNetns(path string) func(*specs.Spec) {
	return func(s *specs.Spec) {
		for i, n := range s.Linux.Namespaces {
			if n.Type == specs.NetworkNamespace {
				s.Linux.Namespaces[i].Path = path
			}
		}
		for i, m := range s.Mounts {
			if m.Destination == "/sys" && m.Type == "sysfs" {
				s.Mounts[i] = specs.Mount{Destination: "/sys", Type: "bind", Source: "/sys", Options: []string{"rbind", "nosuid", "noexec", "nodev", "ro"}}
			}
		}
		s.Hooks = nil
	}
}

// withoutSocketCovers drops the empty files bound over the unix sockets
// found in the workspace, the launcher's canary among them.
func withoutSocketCovers(s *specs.Spec) {
	s.Mounts = slices.DeleteFunc(s.Mounts, func(m specs.Mount) bool { return filepath.Base(m.Source) == policy.CoverFile })
}

// withInitAsAgent runs init as the agent's uid with no capability, the
// layout before init got ids of its own: the sandbox's process is the
// agent's default ids (a root-owned workspace's), and init's children
// switch to nothing (see withoutUIDSwitch).
func withInitAsAgent(s *specs.Spec) {
	s.Process.User.UID, s.Process.User.GID = policy.AgentUID, policy.AgentGID
	s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: []string{}, Effective: []string{}, Permitted: []string{}, Inheritable: []string{}, Ambient: []string{}}
}

// withoutUIDSwitch leaves init's children init's own ids and capabilities:
// the probes, and the child that becomes the agent, run as init does.
func withoutUIDSwitch(c *selftest.InitConfig) { c.Agent.User = nil }

// weakenAll applies each weakening in order.
func weakenAll(ws ...func(*specs.Spec)) func(*specs.Spec) {
	return func(s *specs.Spec) {
		for _, w := range ws {
			w(s)
		}
	}
}

// kernelSandbox is the hardened sandbox with its kernel-facing layers
// removed: every capability, no seccomp filter, no_new_privs unset, host
// root mapped in and in use, no /proc masks, no nosuid, a writable root
// and sysfs, a host device, and the host's UTS namespace; init's children
// keep init's ids and capabilities. The invoking
// user's home is bound read-only too: as host root, the sandbox can read
// the canary file the launcher plants there.
func kernelSandbox(t *testing.T) probeSandbox {
	t.Helper()
	return probeSandbox{
		ro:     []string{invokingHome(t)},
		accept: []string{"home-directory-mounted=the probe test binds the home on purpose"},
		weaken: weakenAll(withAllCapabilities, withoutSeccomp, withNewPrivs, withHostRoot,
			withoutProcMasks, withSuid, withWritableRoot, withWritableSysfs, withHostDevice, withHostUTS),
		weakenInit: withoutUIDSwitch,
	}
}

// invokingHome is the home the launcher plants its canary file in.
func invokingHome(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// leakVar is a credential-shaped variable the boundary sandbox lets in;
// its value is no secret.
const leakVar = "AGENTBOX_PROBE_TEST_API_TOKEN"

// boundarySandbox is the hardened sandbox with its user-facing boundary
// removed through the policy (the invoking user's home and an engine socket
// bound read-only, a credential-shaped variable and the launcher's canary
// variable let in, each accepted with a reason) and the spec (the host's
// procfs bound in, a writable /usr, the workspace's sockets uncovered, a
// network namespace whose lo is down, so that the positive control must
// fail, and init running as the agent's uid); init is told to expect
// gVisor's Sentry, which runc does not provide.
func boundarySandbox(t *testing.T) probeSandbox {
	t.Helper()
	t.Setenv(leakVar, "not-a-secret-"+randomHex(t)[:8])
	return probeSandbox{
		ro:  []string{invokingHome(t), fakeEngineSocket(t)},
		env: []string{leakVar, canaryEnvPrefix + "*"},
		accept: []string{
			"home-directory-mounted=the probe test binds the home on purpose",
			"container-socket-mounted=the probe test binds a socket named docker.sock on purpose",
			"secret-in-environment=the probe test lets a credential-shaped variable in on purpose",
		},
		weaken: weakenAll(withHostProc, withWritableUsr, withoutSocketCovers, withNetns(netnsPath(newDownNet(t))), withInitAsAgent),
		weakenInit: func(ic *selftest.InitConfig) {
			withoutUIDSwitch(ic)
			ic.Kernel.GVisor = true // gVisor's Sentry expected, the host kernel found
		},
	}
}

// fakeEngineSocket listens on a unix socket named docker.sock in a
// directory of the test's own; it answers nothing.
func fakeEngineSocket(t *testing.T) string {
	t.Helper()
	p := filepath.Join(shortTempDir(t, "abs-"), "docker.sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(fmt.Errorf("fake engine socket: %w", err))
	}
	t.Cleanup(func() { l.Close() })
	return p
}
