package launcher

import (
	"os"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// PolicyFlags are the command-line flags that fill a policy.Policy, shared
// by every subcommand that builds a sandbox (run, spec, selftest, compose,
// kube); the CLI binds its flags to the fields.
type PolicyFlags struct {
	File, Workspace   string
	ReadOnly, RW, Env []string
	Memory            string
	Pids              int64
	CPUWeight         uint64
	Runtime, Rootfs   string
	Isolation         string
	Accept, Allow     []string
	Upstreams         []string
	LocalTCP          bool
}

// Inputs are the policy the flags alone describe and the policy files
// this invocation may read, for Config.Policy and Config.Sources.
func (f PolicyFlags) Inputs(cwd string, getenv func(string) string) (policy.Policy, policy.Sources, error) {
	src, err := policy.SourcesFor(cwd, f.Workspace, f.File, uint32(os.Geteuid()), getenv)
	if err != nil {
		return policy.Policy{}, src, err
	}
	flags, err := f.Policy()
	return flags, src, err
}

// Policy is the policy the flags alone describe. An --accept code must be
// in the audit's catalog, so a typo is an input error.
func (f PolicyFlags) Policy() (policy.Policy, error) {
	p := policy.Policy{
		Workspace: f.Workspace,
		Binds:     policy.Binds{ReadOnly: f.ReadOnly, ReadWrite: f.RW},
		Limits:    policy.Limits{Memory: f.Memory, Pids: f.Pids, CPUWeight: f.CPUWeight},
		Runtime:   f.Runtime,
		Rootfs:    f.Rootfs,
		Isolation: f.Isolation,
		Network:   policy.Network{Allow: f.Allow, LocalTCP: f.LocalTCP},
	}
	if len(f.Env) > 0 {
		p.Env.Allow = f.Env
	}
	for _, u := range f.Upstreams {
		name, url, err := netpolicy.ParseUpstreamFlag(u)
		if err != nil {
			return policy.Policy{}, &policy.InputError{Msg: err.Error()}
		}
		if p.Gateway.Upstreams == nil {
			p.Gateway.Upstreams = map[string]policy.Upstream{}
		}
		p.Gateway.Upstreams[name] = policy.Upstream{URL: url}
	}
	for _, a := range f.Accept {
		code, reason, err := audit.ParseAccept(a)
		if err != nil {
			return policy.Policy{}, &policy.InputError{Field: "--accept", Msg: err.Error(), Fix: "see 'agentbox audit --codes' for the codes"}
		}
		p.Accept = append(p.Accept, policy.Acceptance{Code: code, Reason: reason})
	}
	return p, nil
}
