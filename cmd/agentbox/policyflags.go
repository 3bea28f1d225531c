package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// policyFlags are the flags that fill a policy.Policy, shared by every
// subcommand that builds a sandbox (run, spec, selftest).
type policyFlags struct {
	file      string
	workspace string
	ro, rw    []string
	env       []string
	memory    string
	pids      int64
	cpuWeight uint64
	runtime   string
	rootfs    string
	isolation string
	accept    []string
	allow     []string
	upstreams []string
	localTCP  bool
}

func (f *policyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.file, "policy", "", "policy file, used instead of WORKSPACE/agentbox.yaml (a file inside the workspace must be trusted: agentbox trust)")
	fs.StringVarP(&f.workspace, "workspace", "w", "", "project directory, bound read-write (default: current directory)")
	fs.StringArrayVar(&f.ro, "ro-bind", nil, "extra host path bound read-only (repeatable)")
	fs.StringArrayVar(&f.rw, "rw-bind", nil, "extra host path bound read-write (repeatable; the audit reports it)")
	fs.StringArrayVar(&f.env, "env", nil, "environment variable NAME (or PREFIX*) passed through (repeatable)")
	fs.StringVar(&f.memory, "memory", "", "memory limit (default 4GiB)")
	fs.Int64Var(&f.pids, "pids", 0, "process limit (default 512)")
	fs.Uint64Var(&f.cpuWeight, "cpu-weight", 0, "CPU weight 1-10000 (default 100)")
	fs.StringVar(&f.runtime, "runtime", "", "OCI runtime: runc, crun, runsc or a path (default runc)")
	fs.StringVar(&f.isolation, "isolation", "", "user: run the agent as the account agentbox-agent, with no namespaces (Linux, root; docs/dedicated-user.md)")
	fs.StringVar(&f.rootfs, "rootfs", "", "unpacked image root to use instead of the host's system directories")
	fs.StringArrayVar(&f.accept, "accept", nil, "accept an audit finding: CODE=reason (repeatable)")
	fs.StringArrayVar(&f.upstreams, "upstream", nil, "model route to a URL of your choice: openai=URL, anthropic=URL or NAME=URL (repeatable)")
	fs.StringArrayVar(&f.allow, "allow", nil, "host:port the gateway's proxy may reach (repeatable; default none)")
	fs.BoolVar(&f.localTCP, "local-tcp", false, "let the agent bind and connect to any TCP port of the sandbox's own loopback")
}

// inputs are the policy the flags alone describe and the policy files this
// invocation may read, for launcher.Config.
func (f *policyFlags) inputs(cwd string, getenv func(string) string) (policy.Policy, policy.Sources, error) {
	src, err := policy.SourcesFor(cwd, f.workspace, f.file, uint32(os.Geteuid()), getenv)
	if err != nil {
		return policy.Policy{}, src, err
	}
	flags, err := f.policy()
	return flags, src, err
}

// policy is the policy the flags alone describe.
func (f *policyFlags) policy() (policy.Policy, error) {
	p := policy.Policy{
		Workspace: f.workspace,
		Binds:     policy.Binds{ReadOnly: f.ro, ReadWrite: f.rw},
		Limits:    policy.Limits{Memory: f.memory, Pids: f.pids, CPUWeight: f.cpuWeight},
		Runtime:   f.runtime,
		Rootfs:    f.rootfs,
		Isolation: f.isolation,
	}
	if len(f.env) > 0 {
		p.Env.Allow = f.env
	}
	p.Network = policy.Network{Allow: f.allow, LocalTCP: f.localTCP}
	for _, u := range f.upstreams {
		name, url, err := netpolicy.ParseUpstreamFlag(u)
		if err != nil {
			return policy.Policy{}, &policy.InputError{Msg: err.Error()}
		}
		if p.Gateway.Upstreams == nil {
			p.Gateway.Upstreams = map[string]policy.Upstream{}
		}
		p.Gateway.Upstreams[name] = policy.Upstream{URL: url}
	}
	for _, a := range f.accept {
		code, reason, err := audit.ParseAccept(a) // the catalog's codes only: a typo is an error
		if err != nil {
			return policy.Policy{}, &policy.InputError{Field: "--accept", Msg: err.Error(), Fix: "see 'agentbox audit --codes' for the codes"}
		}
		p.Accept = append(p.Accept, policy.Acceptance{Code: code, Reason: reason})
	}
	return p, nil
}
