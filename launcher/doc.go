// Package launcher is the pipeline of DESIGN.md §3, from a policy to a
// ledger record, as named stages on one typed Config:
//
//	Prepare  → the policy (the user's files, a trusted workspace file, the
//	           flags), the host's facts, the run directory, the gateway,
//	           the id range, the workspace's snapshot, the pure Plan, the
//	           rendered and self-audited spec, the bundle, the LSM profile,
//	           the workspace grant, the canaries, and a created, not yet
//	           started sandbox whose init holds its configuration
//	Start    → the sandbox's init runs the probes
//	Verify   → the probes' results, and the host's own view of the sandbox
//	           (/proc/<pid>: id map, capabilities, seccomp, namespaces,
//	           mounts); any failure refuses the launch
//	HandOver → init starts the agent, which reports its Landlock status
//	Wait     → the agent's exit code, signals forwarded to it
//	Teardown → everything of the run taken down and verified gone, one
//	           ledger.Teardown; the workspace compared with its snapshot
//	Record   → the ledger record, on the ledger and the evidence channel
//
// Each stage is a list of small named steps (namedStep); a failed step
// becomes an *Error that names the step and carries its Kind, and so its
// exit code. KindOf is the one mapper from any error of the pipeline, or of
// any subcommand, to its kind. Once the run directory exists, Teardown and
// Record run whatever happened before.
//
// Run does a whole run; Config.ProbesOnly makes it a self-test (every
// probe, no agent). Spec is the same Prepare recipe run dry up to the
// render: nothing made, leased or started, the id slot the allocator's
// Peek. CollectGarbage cleans what crashed runs left, through the same
// teardown. Compose and ComposeCheck are the compose pipeline: the plan for
// an engine-run sandbox, the compose render, its self-audit, the project
// written (or existing compose files audited), and the audit recorded.
//
// The engine that runs the bundle is behind engine.Engine: Config.Engine
// chooses it (nil: the OCI runtime CLI, engine.OpenRuntime), and the
// package's unit tests run the whole pipeline on a fake whose init is the
// test binary. Config's Weaken, WeakenInit and AfterStep exist for tests
// only: the agentbox command never sets them, and a guard-rail test keeps
// it so; launcher/internal/launchertest is the test-only command that uses
// AfterStep to stop at a named step.
//
// Nothing but cmd/agentbox imports this package.
package launcher
