package engine

import (
	"context"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// Engine is a backend that runs one sandbox from a bundle and takes it
// down again (DESIGN.md §3, "Engine"). Runtime, an OCI runtime driven
// through its command line, is the first; the launcher's tests use a fake.
// Session drives an Engine through create, start and wait.
type Engine interface {
	// WriteBundle writes the spec, and the parts of the sandbox's root
	// that rootfs names, into dir.
	WriteBundle(dir string, s *specs.Spec, rootfs policy.Rootfs) error
	// Create sets the sandbox id of the bundle up without starting its
	// command, and returns the host pid of its first process. The caller
	// should be a child subreaper (BecomeSubreaper) to collect that
	// process's exit status.
	Create(ctx context.Context, id, bundle string, o CreateOptions) (int, error)
	// Start runs the command of a created sandbox.
	Start(ctx context.Context, id string) error
	// Kill sends sig to the sandbox's first process, or to all of its
	// processes when all is true.
	Kill(ctx context.Context, id string, sig syscall.Signal, all bool) error
	// Delete removes the sandbox's state; force kills it first.
	Delete(ctx context.Context, id string, force bool) error
	// State reports a sandbox, or ErrNotFound.
	State(ctx context.Context, id string) (State, error)
	// Teardown takes everything of the run down, runs the cleanups, and
	// verifies from the host that nothing survives. It is safe on a run
	// in any state, one whose sandbox was never created included.
	Teardown(ctx context.Context, t Target, cleanups ...func() error) ledger.Teardown
	// GrantMethod says how a root-owned workspace is handed to the
	// agent's unprivileged host uid for this engine, and why.
	GrantMethod(ctx context.Context) (method, reason string)
	// ProcRoot is where the host sees the sandbox's processes (/proc):
	// the launcher verifies the sandbox through it.
	ProcRoot() string
}

// Waiter is an Engine whose sandbox's first process is not a child of the
// launcher (a daemon's shim is its parent and collects its exit status), so
// that Session asks the engine for the exit code instead of waiting for the
// process itself.
type Waiter interface {
	// Wait blocks until the first process of sandbox id has exited and
	// its output has been passed on, and returns its exit code (128 plus
	// the signal that killed it).
	Wait(id string) (int, error)
}

// Runner is an Engine that creates a sandbox and starts its command in one
// call. Session uses it for a sandbox whose first process holds the
// command back itself (Session.Held): agentbox-init waits on its channel
// for the launcher's go before it starts the agent, so a separate Start
// would be one more runtime call that proves nothing.
type Runner interface {
	// Run is Create followed by Start, in one call.
	Run(ctx context.Context, id, bundle string, o CreateOptions) (int, error)
}

// ForegroundRunner is a Runner whose runtime can stay in the foreground for
// the sandbox's whole life (see Foreground): Session uses it for a held
// sandbox without a terminal when Foreground says so, and waits for the
// runtime instead of the sandbox's first process.
type ForegroundRunner interface {
	Runner
	// Foreground reports whether this engine runs such a sandbox, to be
	// started with o, in the foreground.
	Foreground(o CreateOptions) bool
	// RunForeground creates and starts the sandbox with one runtime
	// process that collects its first process and deletes its state.
	RunForeground(ctx context.Context, id, bundle string, o CreateOptions) (*Foreground, error)
}

// Opener makes the Engine that runs, or ran, a sandbox with runtime r as
// meta.json records it.
type Opener func(r Runtime) Engine

// OpenRuntime is the Opener of the OCI runtime CLI: r itself, writing its
// synthesized root into a tmpfs (Runtime.RootTmpfs).
func OpenRuntime(r Runtime) Engine {
	r.RootTmpfs = true
	return r
}

var (
	_ Engine           = Runtime{}
	_ Runner           = Runtime{}
	_ ForegroundRunner = Runtime{}
)
