package launcher

import (
	"io"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// Config is everything one launch is driven by: what the command line
// said, the process's streams and environment, and where things are. The
// zero value of each field is documented; cmd/agentbox fills it from the
// flags, tests fill it by hand.
type Config struct {
	// Argv is the agent's command (run). A probes-only run starts no
	// agent and ignores it.
	Argv []string
	// Policy is the policy the flags alone describe; it is validated,
	// then merged over the policy files that Sources names (the user's
	// own, then --policy or the workspace's trusted agentbox.yaml).
	Policy  policy.Policy
	Sources policy.Sources

	// Stdin, Stdout and Stderr are the user's streams: the agent's
	// streams are copied to and from them (files are used directly, any
	// other reader or writer as /dev/null to the sandbox), and the
	// launcher's own notes go to Stderr. Nil Stdout or Stderr discards.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the launcher's environment: AGENTBOX_STATE_DIR,
	// AGENTBOX_RUN_ROOT, XDG_RUNTIME_DIR, HOME and AGENTBOX_CONFIG_DIR
	// through the policy sources, AGENTBOX_INIT, AGENTBOX_TRACE=1 (each
	// step's wall time on Stderr) and, for the benchmark only,
	// AGENTBOX_BENCH_NO_LISTENER=1 (NoListenerEnv). Nil reads nothing.
	Getenv func(string) string
	// Environ is the environment the plan's allowlist chooses from (what
	// may cross into the sandbox); nil is this process's environment.
	Environ []string

	// JSON keeps the launcher's notes off Stderr; the evidence then goes
	// only to the Evidence channel, which a run (not a probes-only run)
	// must have.
	JSON bool
	// Evidence is the --evidence channel, FD|FILE (ledger.OpenEvidence);
	// "" for none.
	Evidence string
	// RawTerminal passes the agent's output to the user's terminal
	// unfiltered (--raw-terminal).
	RawTerminal bool

	// ProbesOnly makes a self-test: every probe, the host's verification
	// and teardown, and no agent. Failed probes then end it with
	// ExitFindings instead of a refusal.
	ProbesOnly bool
	// AllowUnknown are probes whose UNKNOWN the user accepts, each with a
	// reason (recorded as a residual); see ParseSelfTestFlags.
	AllowUnknown map[string]string
	// Targets aim the network probes at test hosts (--probe-target).
	Targets selftest.Targets

	// Dirs are the state directory and run root; zero finds them from
	// Getenv (FindDirs), inside the pipeline's host step. They are checked
	// there and made only by the run directory step (never by Spec).
	Dirs Dirs
	// InitPath is agentbox-init on the host; "" finds it (FindInit:
	// $AGENTBOX_INIT, beside this executable, on PATH).
	InitPath string
	// Engine makes the engine that runs the bundle with the runtime the
	// plan chose, and that takes down the stale runs gc finds; nil is the
	// OCI runtime CLI (engine.OpenRuntime). Tests give a fake.
	Engine engine.Opener

	// agentTest is the escape-prompt self-test this run is (AgentSelfTest);
	// nil for any other run.
	agentTest *agentTest

	// Weaken is for tests only: it changes the spec written to the bundle
	// (a deep copy of the audited and recorded one) after the self-audit
	// passed, so that a test can prove that each probe reports ALLOW when
	// its layer is missing. The agentbox command never sets it.
	Weaken func(*specs.Spec)
	// WeakenInit is for tests only: it changes the configuration init
	// gets, as Weaken changes the bundle's spec. The agentbox command
	// never sets it.
	WeakenInit func(*selftest.InitConfig)
	// AfterStep is for tests only: it is called after each named step of
	// the pipeline ("create", "self-test", "hand over", …), whether the
	// step failed or not, so that a failure-injection test can stop the
	// launcher at an exact point and kill it (see
	// launcher/internal/launchertest). The steps of a group that run side
	// by side (sideBySide) are reported once the whole group is done, in
	// the recipe's order. The agentbox command never sets it.
	AfterStep func(step string)
}

// Result is what a launch produced, whether or not it ended in an error.
type Result struct {
	// Record is the ledger record (zero when the launch failed before it
	// had a run directory, and then none was written).
	Record ledger.Record
	// Probes are every in-sandbox probe's result, then the host's checks.
	Probes []selftest.Result
	// Failed are the results that refuse a launch (or fail a self-test),
	// as selftest.Judge finds them: not the expected decision, and neither
	// an accepted UNKNOWN nor an ALLOW that a recorded residual names.
	Failed []selftest.Result
	// ResidualAllowed counts the results that are ALLOW only under a
	// recorded residual.
	ResidualAllowed int
	// Plan is the resolved plan, nil when planning was not reached.
	Plan *policy.Plan
	// ExitCode is the process exit code: the agent's own for a run that
	// handed over, else the one of the error (ExitCode) or the self-test.
	ExitCode int
}

func (c Config) opener() engine.Opener {
	if c.Engine == nil {
		return engine.OpenRuntime
	}
	return c.Engine
}

func (c Config) getenv(k string) string {
	if c.Getenv == nil {
		return ""
	}
	return c.Getenv(k)
}

func (c Config) stderr() io.Writer {
	if c.Stderr == nil {
		return io.Discard
	}
	return c.Stderr
}

// stdFiles returns the user's streams that are files, which the session
// copies to and from the sandbox (it never hands them over); a stream that
// is not a file is none (/dev/null to the sandbox).
func (c Config) stdFiles() (in, out, errf *os.File) {
	in, _ = c.Stdin.(*os.File)
	out, _ = c.Stdout.(*os.File)
	errf, _ = c.Stderr.(*os.File)
	return in, out, errf
}
