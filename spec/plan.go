package spec

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

// Extras are the parts of a spec that the plan names but does not hold:
// the compiled seccomp filter of the plan's profile, the id maps made from
// the plan's request (Identity.IDMap) once the run's ids are leased, and
// where the bundle keeps the root. (No hook raises lo:
// runc and crun raise it in every network namespace they create, and the
// gateway-reachable probe refuses a sandbox where it is down.)
type Extras struct {
	// Seccomp is the filter of the plan's profile (seccomp/profiles.Named
	// of Plan.Seccomp), compiled for the sandbox's architecture.
	Seccomp *specs.LinuxSeccomp
	// UIDMappings and GIDMappings are the user namespace's maps, checked
	// against the plan's identity (policy.Identity.CheckMappings); none
	// renders no user namespace maps.
	UIDMappings, GIDMappings []specs.LinuxIDMapping
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
		WithUserNamespace(x.UIDMappings, x.GIDMappings),
		WithMounts(plan.Mounts),
		WithLimits(plan.Limits),
		WithLSM(plan.LSM),
		WithSeccomp(x.Seccomp),
	}
	if plan.CgroupsPath != "" {
		opts = append(opts, WithCgroupsPath(plan.CgroupsPath))
	}
	return opts
}
