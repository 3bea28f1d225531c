package spec

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

// Extras are the parts of a spec that come from agentbox itself rather than
// from the plan: the seccomp profile and the cgroup. (No hook raises lo:
// runc and crun raise it in every network namespace they create, and the
// gateway-reachable probe refuses a sandbox where it is down.)
type Extras struct {
	// Seccomp is the filter to install (seccomp/profiles).
	Seccomp *specs.LinuxSeccomp
	// CgroupsPath is the sandbox's cgroup, for example /agentbox/RUN_ID.
	CgroupsPath string
	// RootfsPath is the root directory, relative to the bundle.
	RootfsPath string
}

// FromPlan renders plan as a complete spec: Default plus the options that
// translate each part of the plan.
func FromPlan(plan *policy.Plan, x Extras) (*specs.Spec, error) {
	s := Default()
	if err := Apply(s, Options(plan, x)...); err != nil {
		return nil, err
	}
	return s, nil
}

// Options lists, in order, the options that render plan.
func Options(plan *policy.Plan, x Extras) []Opt {
	root := x.RootfsPath
	if root == "" {
		root = "rootfs"
	}
	uid, gid, caps := plan.ProcessUser()
	opts := []Opt{
		WithRootfs(root),
		WithHostname(plan.Hostname),
		WithProcess(plan.ProcessArgs(), plan.Env, plan.ProcessCwd()),
		WithUser(uid, gid),
		WithCapabilities(caps),
		WithTerminal(plan.Terminal),
		WithUserNamespace(plan.Identity.UIDMappings, plan.Identity.GIDMappings),
		WithMounts(plan.Mounts),
		WithLimits(plan.Limits),
		WithLSM(plan.LSM),
		WithSeccomp(x.Seccomp),
	}
	if x.CgroupsPath != "" {
		opts = append(opts, WithCgroupsPath(x.CgroupsPath))
	}
	return opts
}
