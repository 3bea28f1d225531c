// Package spec renders a policy.Plan into an OCI runtime-spec config
// (github.com/opencontainers/runtime-spec) as a hardened baseline plus small
// ordered options, the way containerd's spec_opts do.
//
// Default returns the most locked-down spec agentbox knows: every capability
// set empty, no_new_privileges, a read-only root, new pid, mount, ipc, uts,
// network, user and cgroup namespaces, a minimal /dev, /proc and /sys
// read-only where it matters with the engines' masked paths and the host's
// boot facts (MaskedPaths, each with its reason), no core dumps. Each Opt changes one thing and is applied in order by Apply;
// FromPlan lists the options for a plan. Renderers translate; they never
// decide: every choice (which paths, which ids, which limits) is already in
// the Plan.
package spec
