package main

import (
	"github.com/spf13/pflag"

	"github.com/agentbox/agentbox/launcher"
)

// policyFlags are the flags that fill a policy.Policy (launcher.PolicyFlags),
// shared by every subcommand that builds a sandbox.
type policyFlags struct{ launcher.PolicyFlags }

func (f *policyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.File, "policy", "", "policy file, used instead of WORKSPACE/agentbox.yaml (a file inside the workspace must be trusted: agentbox trust)")
	fs.StringVarP(&f.Workspace, "workspace", "w", "", "project directory, bound read-write (default: current directory)")
	fs.StringArrayVar(&f.ReadOnly, "ro-bind", nil, "extra host path bound read-only (repeatable)")
	fs.StringArrayVar(&f.RW, "rw-bind", nil, "extra host path bound read-write (repeatable; the audit reports it)")
	fs.StringArrayVar(&f.Env, "env", nil, "environment variable NAME (or PREFIX*) passed through (repeatable)")
	fs.StringVar(&f.Memory, "memory", "", "memory limit (default 4GiB)")
	fs.Int64Var(&f.Pids, "pids", 0, "process limit (default 512)")
	fs.Uint64Var(&f.CPUWeight, "cpu-weight", 0, "CPU weight 1-10000 (default 100)")
	fs.StringVar(&f.Runtime, "runtime", "", "OCI runtime: runc, crun, runsc or a path (default: crun where it is installed and passes its self-test here, else runc; agentbox doctor says which)")
	fs.StringVar(&f.Rootfs, "rootfs", "", "unpacked image root to use instead of the host's system directories")
	fs.StringArrayVar(&f.Accept, "accept", nil, "accept an audit finding: CODE=reason (repeatable)")
	fs.StringArrayVar(&f.Upstreams, "upstream", nil, "model route to a URL of your choice: openai=URL, anthropic=URL or NAME=URL (repeatable)")
	fs.StringArrayVar(&f.Allow, "allow", nil, "host:port the gateway's proxy may reach (repeatable; default none)")
	fs.BoolVar(&f.LocalTCP, "local-tcp", false, "let the agent bind and connect to any TCP port of the sandbox's own loopback")
	fs.StringVar(&f.Isolation, "isolation", "", "user: run the agent as the account agentbox-agent, with no namespaces (Linux, root; docs/dedicated-user.md)")
}
