package spec

import (
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

// Each option is applied to a zero spec and the result diffed: an option
// changes one thing and nil-guards what it touches.
func TestOptionsOnZeroSpec(t *testing.T) {
	mem, pids, shares := int64(1<<30), int64(64), uint64(512)
	uids := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	tests := []struct {
		name string
		opt  Opt
		want specs.Spec
	}{
		{"process", WithProcess([]string{"/bin/sh"}, []string{"A=1"}, "/w"), specs.Spec{Process: &specs.Process{Args: []string{"/bin/sh"}, Env: []string{"A=1"}, Cwd: "/w"}}},
		{"user", WithUser(1000, 1001), specs.Spec{Process: &specs.Process{User: specs.User{UID: 1000, GID: 1001}}}},
		{"capabilities", WithCapabilities([]string{"CAP_KILL"}), specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{
			Bounding: []string{"CAP_KILL"}, Effective: []string{"CAP_KILL"}, Permitted: []string{"CAP_KILL"}, Inheritable: []string{}, Ambient: []string{},
		}}}},
		{"no capabilities", WithCapabilities(nil), specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{
			Bounding: []string{}, Effective: []string{}, Permitted: []string{}, Inheritable: []string{}, Ambient: []string{},
		}}}},
		{"terminal", WithTerminal(true), specs.Spec{Process: &specs.Process{Terminal: true}}},
		{"hostname", WithHostname("box"), specs.Spec{Hostname: "box"}},
		{"userns", WithUserNamespace(uids, uids), specs.Spec{Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.UserNamespace}}, UIDMappings: uids, GIDMappings: uids}}},
		{"rootfs", WithRootfs("r"), specs.Spec{Root: &specs.Root{Path: "r", Readonly: true}}},
		{"seccomp", WithSeccomp(&specs.LinuxSeccomp{DefaultAction: specs.ActErrno}), specs.Spec{Linux: &specs.Linux{Seccomp: &specs.LinuxSeccomp{DefaultAction: specs.ActErrno}}}},
		{"cgroup", WithCgroupsPath("/agentbox/x"), specs.Spec{Linux: &specs.Linux{CgroupsPath: "/agentbox/x"}}},
		{"limits v1", WithLimits(&policy.ResolvedLimits{MemoryBytes: mem, Pids: pids, CPUWeight: 50}), specs.Spec{Linux: &specs.Linux{Resources: &specs.LinuxResources{
			Memory: &specs.LinuxMemory{Limit: &mem, Swap: &mem}, Pids: &specs.LinuxPids{Limit: &pids}, CPU: &specs.LinuxCPU{Shares: &shares},
		}}}},
		{"limits v2", WithLimits(&policy.ResolvedLimits{MemoryBytes: mem, Pids: pids, CPUWeight: 50, CgroupV2: true}), specs.Spec{Linux: &specs.Linux{Resources: &specs.LinuxResources{
			Memory: &specs.LinuxMemory{Limit: &mem, Swap: &mem}, Pids: &specs.LinuxPids{Limit: &pids}, Unified: map[string]string{"cpu.weight": "50"},
		}}}},
		{"no limits", WithLimits(nil), specs.Spec{}},
		{"selinux", WithLSM(policy.LSM{Kind: policy.LSMSELinux, ProcessLabel: "p", MountLabel: "m"}), specs.Spec{Process: &specs.Process{SelinuxLabel: "p"}, Linux: &specs.Linux{MountLabel: "m"}}},
		{"apparmor", WithLSM(policy.LSM{Kind: policy.LSMAppArmor, AppArmorProfile: "agentbox-default"}), specs.Spec{Process: &specs.Process{ApparmorProfile: "agentbox-default"}}},
		{"no lsm", WithLSM(policy.LSM{Kind: policy.LSMNone}), specs.Spec{}},
		{"mounts", WithMounts([]policy.Mount{
			{Kind: policy.KindSystem, Source: "/usr", Destination: "/usr", ReadOnly: true},
			{Kind: policy.KindWorkspace, Source: "/w", Destination: "/w"},
			{Kind: policy.KindTmpfs, Destination: "/tmp", Options: []string{"mode=1777"}},
		}), specs.Spec{Mounts: []specs.Mount{
			{Destination: "/usr", Type: "bind", Source: "/usr", Options: []string{"bind", "nosuid", "nodev", "ro"}},
			{Destination: "/w", Type: "bind", Source: "/w", Options: []string{"bind", "nosuid", "nodev", "rw"}},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got specs.Spec
			if err := Apply(&got, tt.opt); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestOptionsRefuse(t *testing.T) {
	root := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 1}}
	ok := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 1}}
	bad := map[string]Opt{
		"empty command":       WithProcess(nil, nil, "/"),
		"uid map to root":     WithUserNamespace(root, ok),
		"gid map to root":     WithUserNamespace(ok, root),
		"empty map":           WithUserNamespace(nil, ok),
		"no seccomp":          WithSeccomp(nil),
		"bad capability":      WithCapabilities([]string{"KILL"}),
		"relative mount":      WithMounts([]policy.Mount{{Kind: policy.KindExtra, Source: "/a", Destination: "a"}}),
		"bind without source": WithMounts([]policy.Mount{{Kind: policy.KindExtra, Destination: "/a"}}),
	}
	for name, o := range bad {
		if err := Apply(&specs.Spec{}, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// runc refuses id maps without a user namespace ("user namespaces aren't
// enabled in the config"): the option adds the namespace once, and refuses
// to map a namespace the spec joins.
func TestUserNamespaceEntry(t *testing.T) {
	uids := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	s := Default()
	if err := Apply(s, WithUserNamespace(uids, uids)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ns := range s.Linux.Namespaces {
		if ns.Type == specs.UserNamespace {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d user namespace entries on the default spec, want 1", n)
	}
	joined := &specs.Spec{Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.UserNamespace, Path: "/proc/1/ns/user"}}}}
	err := Apply(joined, WithUserNamespace(uids, uids))
	if err == nil || !strings.Contains(err.Error(), "/proc/1/ns/user") {
		t.Errorf("maps for a joined user namespace: %v, want a refusal naming it", err)
	}
}

func TestDefaultIsLockedDown(t *testing.T) {
	s := Default()
	c := s.Process.Capabilities
	for name, set := range map[string][]string{"bounding": c.Bounding, "effective": c.Effective, "permitted": c.Permitted, "inheritable": c.Inheritable, "ambient": c.Ambient} {
		if len(set) != 0 {
			t.Errorf("%s capabilities %v, want none", name, set)
		}
	}
	if !s.Process.NoNewPrivileges || !s.Root.Readonly {
		t.Error("no_new_privileges and a read-only root are the baseline")
	}
	have := map[specs.LinuxNamespaceType]bool{}
	for _, n := range s.Linux.Namespaces {
		if n.Path != "" {
			t.Errorf("namespace %s joins %s; every namespace must be new", n.Type, n.Path)
		}
		have[n.Type] = true
	}
	for _, want := range []specs.LinuxNamespaceType{specs.PIDNamespace, specs.MountNamespace, specs.IPCNamespace, specs.UTSNamespace, specs.NetworkNamespace, specs.UserNamespace, specs.CgroupNamespace} {
		if !have[want] {
			t.Errorf("missing namespace %s", want)
		}
	}
	// At least Docker's masked and read-only paths.
	docker := []string{"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap"}
	for _, p := range docker {
		if !contains(s.Linux.MaskedPaths, p) {
			t.Errorf("%s is not masked", p)
		}
	}
	// The host's boot facts: command line, boot and build configuration.
	for _, p := range []string{"/proc/cmdline", "/proc/bootconfig", "/proc/config.gz"} {
		if !contains(s.Linux.MaskedPaths, p) {
			t.Errorf("%s is not masked", p)
		}
	}
	for _, p := range []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"} {
		if !contains(s.Linux.ReadonlyPaths, p) {
			t.Errorf("%s is not read-only", p)
		}
	}
	for _, m := range s.Mounts {
		if (m.Destination == "/sys" || m.Destination == "/sys/fs/cgroup") && !contains(m.Options, "ro") {
			t.Errorf("%s is writable", m.Destination)
		}
	}
}

// TestKernelPathsAreData: each masked or read-only path is absolute, listed
// once in both lists together, says why, and leaves the sandbox's own
// /proc/PID and /proc/self alone.
func TestKernelPathsAreData(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range append(append([]KernelPath(nil), MaskedPaths...), ReadonlyPaths...) {
		switch {
		case seen[p.Path]:
			t.Errorf("%s is listed twice", p.Path)
		case path.Clean(p.Path) != p.Path || !strings.HasPrefix(p.Path, "/proc/") && !strings.HasPrefix(p.Path, "/sys/"):
			t.Errorf("%s is not a clean /proc or /sys path", p.Path)
		case strings.HasPrefix(p.Path, "/proc/self") || strings.HasPrefix(p.Path, "/proc/thread-self"):
			t.Errorf("%s hides the sandbox's own process", p.Path)
		case len(strings.Fields(p.Reason)) < 4:
			t.Errorf("%s: reason %q is not a reason", p.Path, p.Reason)
		}
		seen[p.Path] = true
	}
	if got := EnginePaths(MaskedPaths); len(got) == 0 || len(got) == len(MaskedPaths) || !contains(got, "/proc/keys") || contains(got, "/proc/cmdline") {
		t.Errorf("EnginePaths(MaskedPaths) = %v, want the engines' share: /proc/keys but not /proc/cmdline", got)
	}
	if d := cmp.Diff(Paths(MaskedPaths), Default().Linux.MaskedPaths); d != "" {
		t.Errorf("Default's masked paths (-list +spec):\n%s", d)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
