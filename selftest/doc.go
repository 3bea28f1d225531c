// Package selftest is the probe catalog that proves the sandbox from inside,
// its result contract (DESIGN.md §5), the protocol between the launcher and
// agentbox-init, and the host-side verification of a running sandbox.
//
// # Probes
//
// Catalog lists every Probe; Run runs the ones an InitConfig selects in the
// calling process and emits one Result per probe. A Result's Decision is
// DENY, ALLOW or UNKNOWN; it passes when it equals Expect. A probe that
// cannot establish its answer says UNKNOWN, which blocks a launch like a
// failure. Observed names what was seen ("EPERM", "mounted", "no-route");
// no Result ever carries a secret's value (canaries are compared by digest).
//
// Syscall probes are side-effect free where the kernel allows: arguments are
// chosen so that a permitted call fails harmlessly after its permission
// check (EFAULT, EBADF, EINVAL: ALLOW) and a refused one fails with EPERM,
// EACCES or ENOSYS (DENY). Each call's comment names the check order relied on.
//
// Security-relevant defaults: network probes with no configured target only
// ask the kernel for a route (connect(2) on a UDP socket sends nothing), to
// documentation and metadata addresses; configured targets are connected to
// for real. Set Targets to aim them elsewhere; tests aim them at test hosts.
//
// # Init protocol
//
// The launcher makes a unix stream socketpair (NewLauncher) and passes one
// end to agentbox-init as fd 3 (InitFD; runc --preserve-fds 1). Every
// message is one JSON line (Message, at most 1 MiB), with "type":
//
//	launcher → init  {"type":"config","config":{InitConfig}}
//	init → launcher  {"type":"result","result":{Result}}      one per probe, catalog order
//	init → launcher  {"type":"probes-done","pid":N}              N: the agent-to-be, parked
//	launcher → init  {"type":"go"} or {"type":"abort","reason":"…"}   only if config.wait_go
//	init → launcher  {"type":"started","pid":N,"landlock":{LandlockStatus}}
//	init → launcher  {"type":"exit","code":N}                  when the agent has ended
//
// At any point init may send {"type":"error","reason":"…"} and exit with
// ExitInitFailed (125), or ExitCannotExec (126) / ExitNotFound (127) when the
// agent cannot be started. Otherwise init exits with the agent's code, 128+N
// when signal N ended it. Every child of init first becomes the agent
// (Command.User: bounding set emptied, the agent's gid and uid, every
// capability set empty) before it executes anything. Init runs the probes in
// such a child, which runs them itself once it is the agent (what
// "--probe all --json" would print, without another exec), with the agent's
// environment and directory; a probe that child does not report is sent as
// UNKNOWN ("no-result"). Then it starts the child that becomes the agent and
// reports its pid with probes-done: that child waits, already under the
// agent's ids, for the go, so the launcher verifies the agent's credentials
// from the host (VerifyHost, HostPID) before anything runs. Init keeps fd 3
// close-on-exec and makes itself non-dumpable, so the agent can neither
// inherit, ptrace nor open it.
//
// Init reads fd 3 for the whole run. When the channel closes (EOF or any
// error: the launcher closed its end in teardown, or died), init ends the
// sandbox at once, by exiting as PID 1 of its PID namespace. The launcher's
// end is close-on-exec and never passed to another process, so that it
// closes when the launcher does.
//
// # Host verification
//
// VerifyHost reads /proc/<pid> of the sandbox's agent-to-be and of init from
// the host and returns "host-…" Results in the same format: uid_map, the
// four capability sets, NoNewPrivs, Seccomp, namespaces against the host's,
// the host path behind every mount, and that init's uids are not the
// agent's. IdentifyHostPath names a host path (filesystem and path inside it)
// so that probes can find it wherever a mount shows it.
package selftest
