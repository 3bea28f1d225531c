package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

// Opt changes one aspect of a spec. Options nil-guard what they touch, so
// each can be tested on a zero spec.
type Opt func(*specs.Spec) error

// Apply applies opts to s in order and stops at the first error.
func Apply(s *specs.Spec, opts ...Opt) error {
	for _, o := range opts {
		if err := o(s); err != nil {
			return err
		}
	}
	return nil
}

func ensureProcess(s *specs.Spec) *specs.Process {
	if s.Process == nil {
		s.Process = &specs.Process{}
	}
	return s.Process
}

func ensureLinux(s *specs.Spec) *specs.Linux {
	if s.Linux == nil {
		s.Linux = &specs.Linux{}
	}
	return s.Linux
}

func ensureResources(s *specs.Spec) *specs.LinuxResources {
	l := ensureLinux(s)
	if l.Resources == nil {
		l.Resources = &specs.LinuxResources{}
	}
	return l.Resources
}

// WithProcess sets the command, its environment and working directory.
func WithProcess(args, env []string, cwd string) Opt {
	return func(s *specs.Spec) error {
		if len(args) == 0 {
			return errors.New("process: empty command")
		}
		p := ensureProcess(s)
		p.Args, p.Env, p.Cwd = append([]string(nil), args...), append([]string(nil), env...), cwd
		return nil
	}
}

// WithUser sets the uid and gid the process runs as inside, with no
// supplementary groups.
func WithUser(uid, gid uint32) Opt {
	return func(s *specs.Spec) error {
		ensureProcess(s).User = specs.User{UID: uid, GID: gid}
		return nil
	}
}

// WithCapabilities gives the process caps in its bounding, effective and
// permitted sets and none in the inheritable and ambient ones, so that no
// capability survives an exec under another uid: agentbox-init holds
// policy.InitCaps only to hand its children the agent's ids, and they drop
// everything before they execute anything. Nil or empty means no capability
// at all.
func WithCapabilities(caps []string) Opt {
	return func(s *specs.Spec) error {
		for _, c := range caps {
			if !strings.HasPrefix(c, "CAP_") {
				return fmt.Errorf("capabilities: %q is not a capability name (CAP_…)", c)
			}
		}
		set := func() []string { return append([]string{}, caps...) }
		ensureProcess(s).Capabilities = &specs.LinuxCapabilities{
			Bounding: set(), Effective: set(), Permitted: set(), Inheritable: []string{}, Ambient: []string{},
		}
		return nil
	}
}

// WithTerminal gives the process a pseudo-terminal.
func WithTerminal(on bool) Opt {
	return func(s *specs.Spec) error {
		ensureProcess(s).Terminal = on
		return nil
	}
}

// WithHostname sets the UTS host name.
func WithHostname(name string) Opt {
	return func(s *specs.Spec) error {
		s.Hostname = name
		return nil
	}
}

// WithUserNamespace sets the id maps of the (always new) user namespace,
// and adds the namespace when the spec lacks it (runc refuses maps without
// one), as containerd's option does. A spec that joins an existing user
// namespace (a path) is refused: the maps are for a new one.
//
// A map that reaches host root is refused here too, although the planner
// refuses it first (policy's checkNoHostRoot, which names /etc/subuid and
// the fix): defence in depth, so that no spec this package renders, from
// any plan, runs the sandbox's ids as host root.
func WithUserNamespace(uids, gids []specs.LinuxIDMapping) Opt {
	return func(s *specs.Spec) error {
		if len(uids) == 0 || len(gids) == 0 {
			return errors.New("user namespace: empty id map")
		}
		for _, m := range append(append([]specs.LinuxIDMapping{}, uids...), gids...) {
			if m.HostID == 0 {
				return fmt.Errorf("user namespace: map %d→0 reaches host root", m.ContainerID)
			}
		}
		l := ensureLinux(s)
		if err := ensureNamespace(l, specs.UserNamespace); err != nil {
			return fmt.Errorf("user namespace: %w", err)
		}
		l.UIDMappings = append([]specs.LinuxIDMapping(nil), uids...)
		l.GIDMappings = append([]specs.LinuxIDMapping(nil), gids...)
		return nil
	}
}

// ensureNamespace adds a new namespace of type t to l unless l has one; a
// namespace of type t that is joined by path is an error.
func ensureNamespace(l *specs.Linux, t specs.LinuxNamespaceType) error {
	for _, ns := range l.Namespaces {
		if ns.Type == t && ns.Path != "" {
			return fmt.Errorf("the spec joins the %s namespace at %s; a new one is needed", t, ns.Path)
		}
		if ns.Type == t {
			return nil
		}
	}
	l.Namespaces = append(l.Namespaces, specs.LinuxNamespace{Type: t})
	return nil
}

// WithRootfs points the root at path, read-only.
func WithRootfs(path string) Opt {
	return func(s *specs.Spec) error {
		s.Root = &specs.Root{Path: path, Readonly: true}
		return nil
	}
}

// WithSeccomp installs a seccomp filter.
func WithSeccomp(sc *specs.LinuxSeccomp) Opt {
	return func(s *specs.Spec) error {
		if sc == nil {
			return errors.New("seccomp: no profile")
		}
		ensureLinux(s).Seccomp = sc
		return nil
	}
}

// WithCgroupsPath places the sandbox in its own cgroup.
func WithCgroupsPath(path string) Opt {
	return func(s *specs.Spec) error {
		ensureLinux(s).CgroupsPath = path
		return nil
	}
}

// WithLimits sets memory (swap included, so it cannot be dodged), pids and
// CPU weight: cpu.weight on cgroup v2, the equivalent cpu.shares on v1.
func WithLimits(l *policy.ResolvedLimits) Opt {
	return func(s *specs.Spec) error {
		if l == nil {
			return nil
		}
		r := ensureResources(s)
		mem := l.MemoryBytes
		r.Memory = &specs.LinuxMemory{Limit: &mem, Swap: &mem}
		pids := l.Pids
		r.Pids = &specs.LinuxPids{Limit: &pids}
		if l.CgroupV2 {
			if r.Unified == nil {
				r.Unified = map[string]string{}
			}
			r.Unified["cpu.weight"] = strconv.FormatUint(l.CPUWeight, 10)
		} else {
			shares := l.CPUWeight * 1024 / 100
			r.CPU = &specs.LinuxCPU{Shares: &shares}
		}
		return nil
	}
}

// WithLSM names the SELinux labels or the AppArmor profile. LSMNone
// changes nothing.
func WithLSM(l policy.LSM) Opt {
	return func(s *specs.Spec) error {
		switch l.Kind {
		case policy.LSMSELinux:
			ensureProcess(s).SelinuxLabel = l.ProcessLabel
			ensureLinux(s).MountLabel = l.MountLabel
		case policy.LSMAppArmor:
			ensureProcess(s).ApparmorProfile = l.AppArmorProfile
		default:
			// LSMNone: Landlock, which init applies, needs nothing in the spec
		}
		return nil
	}
}
