// Package launcher is the pipeline of DESIGN.md §3, from a policy to a
// ledger record, as named stages on one typed Config:
//
//	Prepare  → the policy (the user's files, a trusted workspace file, the
//	           flags), the host's facts, the run directory, the gateway,
//	           the id range, the workspace's snapshot, the Plan, the
//	           rendered and self-audited spec, the bundle, the LSM profile,
//	           the workspace grant, the canaries, and a created, not yet
//	           started sandbox whose init holds its configuration
//	Start    → the sandbox's init runs the probes
//	Verify   → the probes' results, and the host's own view of the sandbox
//	           (/proc/<pid>: id map, capabilities, seccomp, namespaces,
//	           mounts); any failure refuses the launch
//	HandOver → init starts the agent, which reports its Landlock status
//	Wait     → the agent's exit code, signals forwarded to it
//	Teardown → everything of the run taken down and verified gone
//	           (ledger.Teardown), the workspace compared with its snapshot
//	Record   → the ledger record, on the ledger and the evidence channel
//
// Each stage is a list of small named steps (namedStep); a failed step
// becomes an *Error that names the step and carries its Kind, which is the
// exit code (KindOf is the one mapper from any error of the pipeline, or
// of a subcommand, to its kind). Once the run directory exists, Teardown
// and Record run whatever happened before.
//
// Run does a whole run; Config.ProbesOnly makes it a self-test (every
// probe, no agent). Spec is the same Prepare recipe up to the rendered
// spec, with nothing created, leased or started. CollectGarbage cleans what
// crashed runs left, through the same teardown.
//
// The engine that runs the bundle is behind engine.Engine; Config.Engine
// chooses it (the OCI runtime CLI by default; tests substitute a fake).
// Config's Weaken, WeakenInit and AfterStep exist for tests only: the
// agentbox command never sets them, and a guard-rail test keeps it so.
//
// Nothing below cmd/agentbox imports this package.
package launcher
