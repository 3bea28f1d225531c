// Package launcher is the pipeline of DESIGN.md §3, from a policy to a
// ledger record, as named stages on one typed Config. Data flows one way:
// each stage hands a value of its own to the next.
//
//	Plan     → planned: the policy (the user's files, a trusted workspace
//	           file, the flags), the host's facts, the workspace's snapshot,
//	           the run's chosen values (policy.Run: id, run directory,
//	           bundle, gateway token; the canaries' names) and the pure
//	           policy.Plan, the agent adapter's changes included. Nothing
//	           exists outside this process yet.
//	Prepare  → prepared: everything made from the plan: stale runs
//	           collected, the run directory, the id slot leased and the
//	           maps made from the plan's request, the rendered spec, the
//	           runtime judged against engine/advisory's CVE table for this
//	           launch mode (runtimecheck.go), the self-audit, the gateway at the plan's socket with the
//	           plan's token, the bundle, the LSM profile, the workspace
//	           grant, the canaries, and a created, not yet started sandbox
//	           whose init holds its configuration
//	Start    → the sandbox's init runs the probes
//	Verify   → verified: the probes' results and the host's own view of the
//	           sandbox (/proc/<pid>: id map, capabilities, seccomp,
//	           namespaces, mounts), judged by selftest.Judge; any failure
//	           refuses the launch
//	HandOver → handedOver: init starts the agent, which reports its
//	           Landlock status
//	Wait     → the agent's exit code, signals forwarded to it
//	Teardown → tornDown: everything of the run taken down and verified
//	           gone, one ledger.Teardown; the gateway's counts; the workspace
//	           compared with its snapshot
//	Record   → the ledger record, made from the values above, on the ledger
//	           and the evidence channel
//
// Each stage is a list of small named steps (namedStep); a failed step
// becomes an *Error that names the step and carries its Kind, and so its
// exit code. KindOf is the one mapper from any error of the pipeline, or of
// any subcommand, to its kind. Once the run directory exists, Teardown and
// Record run whatever happened before.
//
// Run does a whole run; Config.ProbesOnly makes it a self-test (every
// probe, no agent). Spec is the same recipe run dry: the Plan stage, then
// the ids (the allocator's Peek) and the render; nothing made, leased or
// started, placeholders for the run's id and token. CollectGarbage cleans
// what crashed runs left, through the same teardown. Compose and
// ComposeCheck are the compose pipeline: the plan for an engine-run
// sandbox (policy.TargetEngine), the compose render, its self-audit, the
// project written (or existing compose files audited), and the audit
// recorded.
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
