package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/host"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
	"github.com/agentbox/agentbox/selftest"
	"github.com/agentbox/agentbox/spec"
)

// launch carries one sandbox through the pipeline of DESIGN.md §3. Each
// method is one named step; the stages (run.go, spec.go, selftest.go) call
// them in order. Its fields are what the steps hand on, in the order the
// steps make them.
type launch struct {
	cfg Config
	// out is where the launcher's own notes go (Config.Stderr).
	out io.Writer
	// ev is the --evidence channel, nil without one.
	ev *ledger.Evidence

	runID  string
	dirs   Dirs
	policy policy.Policy
	// sources are the policy files the policy came from.
	sources []policy.Loaded
	host    policy.Host
	ids     idAllocation
	plan    *policy.Plan
	spec    *specs.Spec
	runDir  *engine.RunDir
	// rt is the runtime the plan chose, as meta.json records it, and eng
	// the engine that runs the bundle with it (Config.Engine).
	rt    engine.Runtime
	eng   engine.Engine
	meta  engine.Meta
	grant *engine.Grant
	sess  *engine.Session
	st    selfTest
	gw    *netpolicy.RunGateway
	agent agents.Launch
	ws    workspaceState
	// findings are the self-audit's, accepted ones included.
	findings []audit.Finding
	rec      ledger.Record
}

// newLaunch checks cfg and opens its evidence channel before anything
// runs. For a run, JSON without Evidence is a usage error: the evidence
// used to go to stderr, where the agent can print a forged record before
// the real one.
func newLaunch(cfg Config) (*launch, error) {
	l := &launch{cfg: cfg, out: cfg.stderr()}
	l.st.allowUnknown, l.st.targets = cfg.AllowUnknown, cfg.Targets
	if cfg.JSON && cfg.Evidence == "" && !cfg.ProbesOnly {
		return nil, WithKind(KindUsage, fmt.Errorf("--json needs --evidence FD|FILE: the agent writes to stdout and stderr too, so evidence there could be forged; for example: agentbox run --json --evidence 3 -- CMD 3>evidence.jsonl"))
	}
	if cfg.Evidence == "" {
		return l, nil
	}
	ch, err := ledger.OpenEvidence(cfg.Evidence)
	if err != nil {
		return nil, WithKind(KindUsage, err)
	}
	l.ev = ch
	return l, nil
}

// namedStep is one step of a recipe: its name (for errors and traces) and
// what it does.
type namedStep struct {
	name string
	run  func() error
}

// step runs fn and classifies its error (KindOf): bad input is exit 2, a
// refused boundary 3, anything the host could not do 4.
func (l *launch) step(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	l.trace(name, start)
	if l.cfg.AfterStep != nil {
		l.cfg.AfterStep(name)
	}
	if err == nil {
		return nil
	}
	return StepError(name, err)
}

// runSteps runs steps in order and stops at the first failure, or before
// the next step once ctx has ended (a signal during setup).
func (l *launch) runSteps(ctx context.Context, steps []namedStep) error {
	for _, s := range steps {
		if ctx.Err() != nil {
			return l.step(s.name, func() error { return &refusal{"interrupted before the sandbox started"} })
		}
		if err := l.step(s.name, s.run); err != nil {
			return err
		}
	}
	return nil
}

func (l *launch) loadPolicy() error {
	var err error
	l.policy, l.sources, err = LoadPolicy(l.cfg.Policy, l.cfg.Sources)
	return err
}

// LoadPolicy reads the policy files src names (the user's own, then
// --policy or the workspace's trusted agentbox.yaml), validates the
// policy the flags describe and merges it over them. Errors are
// *policy.InputError with the file and line, or *policy.UntrustedError for
// a workspace file not trusted as it is.
func LoadPolicy(flags policy.Policy, src policy.Sources) (policy.Policy, []policy.Loaded, error) {
	file, loaded, err := policy.Load(src)
	if err != nil {
		return policy.Policy{}, nil, err
	}
	if err := policy.Validate(flags, policy.Source{}); err != nil {
		return policy.Policy{}, nil, err
	}
	return file.Merge(flags), loaded, nil
}

func (l *launch) captureHost() error {
	// The process environment, read after the env canary is planted in
	// it: the canary must meet the plan's allowlist like any secret.
	h, err := host.Capture(os.Environ())
	if err != nil {
		return err
	}
	l.host = h
	if l.dirs = l.cfg.Dirs; l.dirs.isZero() {
		if l.dirs, err = FindDirs(l.cfg.getenv); err != nil {
			return err
		}
	}
	l.dirs.euid = os.Geteuid()
	if err := l.dirs.ensure(); err != nil {
		return err
	}
	init := l.cfg.InitPath
	if init == "" {
		if init, err = FindInit(l.cfg.getenv); err != nil {
			return err
		}
	}
	l.host.InitPath, err = sandboxReachable(init, l.dirs.RunRoot)
	return err
}

func (l *launch) createRunDir() error {
	l.runID = ledger.NewRunID()
	d, err := engine.CreateRunDir(l.dirs.RunRoot, l.runID)
	if err != nil {
		return err
	}
	l.runDir = d
	l.meta = engine.Meta{RunID: l.runID, LauncherPid: os.Getpid(), Started: time.Now().UTC(), Command: l.argv()}
	return l.runDir.WriteMeta(l.meta)
}

func (l *launch) resolvePlan() error {
	bundle := filepath.Join(os.TempDir(), "agentbox-bundle")
	if l.runDir != nil {
		bundle = l.runDir.Bundle()
	}
	plan, err := policy.Resolve(l.policy, l.argv(), l.host, policy.Run{ID: l.runIDOrPlaceholder(), Bundle: bundle})
	if err != nil {
		return err
	}
	l.plan = plan
	l.sayResiduals()
	return nil
}

// argv is the command the plan is made for: a probes-only run starts no
// agent, and plans for `true`.
func (l *launch) argv() []string {
	if l.cfg.ProbesOnly {
		return []string{"true"}
	}
	return l.cfg.Argv
}

// render is the spec of the plan, with the seccomp filter of the plan's
// profile for this machine's architecture.
func (l *launch) render() error {
	p, ok := profiles.Named(l.plan.Seccomp)
	if !ok {
		return fmt.Errorf("the plan names seccomp profile %q, which agentbox does not have", l.plan.Seccomp)
	}
	sc, err := p.NativeOCI()
	if err != nil {
		return err
	}
	s, err := spec.FromPlan(l.plan, spec.Extras{Seccomp: sc})
	if err != nil {
		return err
	}
	l.spec = s
	return nil
}

// runIDOrPlaceholder is the run the plan is for; `agentbox spec` runs
// nothing and has no run id, so its config shows where a run's cgroup
// would go.
func (l *launch) runIDOrPlaceholder() string {
	if l.runID == "" {
		return policy.RunIDPlaceholder
	}
	return l.runID
}

func (l *launch) writeBundle() error {
	l.rt = engine.Runtime{Name: l.plan.Runtime.Name, Path: l.plan.Runtime.Path, Root: l.dirs.runtimeRoot(l.plan.Runtime.Name), UserNS: l.ids.userNS}
	if hide := engine.HiddenUnified(l.rt.Name, l.host.EUID == 0); hide != "" {
		l.rt.Hide = hide
	}
	l.rt.Helper = l.host.InitPath // hides that mount, lays out nested binds
	l.meta.Runtime, l.eng = l.rt, l.cfg.opener()(l.rt)
	if l.spec.Linux != nil {
		l.meta.Cgroup = l.spec.Linux.CgroupsPath
	}
	if err := l.runDir.WriteMeta(l.meta); err != nil {
		return err
	}
	s := l.spec
	if ns := l.ids.userNS; ns != nil {
		var err error
		if s, err = ns.Spec(l.spec); err != nil {
			return err
		}
	}
	if l.cfg.Weaken != nil {
		// A deep copy: a test's change never reaches l.spec, the audited
		// and recorded one.
		var cp specs.Spec
		data, err := json.Marshal(s)
		if err == nil {
			err = json.Unmarshal(data, &cp)
		}
		if err != nil {
			return err
		}
		l.cfg.Weaken(&cp)
		s = &cp
	}
	return l.eng.WriteBundle(l.runDir.Bundle(), s, l.plan.Rootfs)
}

// sayResiduals tells the user, before anything runs, which layers this
// host or this policy makes weaker; the ledger records them too. With
// JSON they are in the run's record instead.
func (l *launch) sayResiduals() {
	if l.cfg.JSON || l.runDir == nil {
		return
	}
	for _, r := range l.plan.Residuals {
		fmt.Fprintf(l.out, "agentbox: residual %s: %s\n", r.Code, r.Reason)
	}
}

// loadLSM loads agentbox's AppArmor profile (root only; the plan chose
// AppArmor for an ordinary user only when the profile is already loaded).
// SELinux needs nothing loaded: the labels are in the spec.
func (l *launch) loadLSM() error {
	if l.plan.LSM.Kind != policy.LSMAppArmor || l.host.EUID != 0 {
		return nil
	}
	text, err := apparmor.Render(l.plan.LSM.AppArmorProfile)
	if err != nil {
		return err
	}
	return apparmor.Load(l.plan.LSM.AppArmorProfile, text)
}

// grantWorkspace hands a root-owned workspace to the agent's unprivileged
// host uid for the run (see engine.Grant); the grant is in meta.json
// before it touches a file, so a crash leaves enough to revoke it.
func (l *launch) grantWorkspace() error {
	id := l.plan.Identity
	if !id.GrantWorkspace {
		return nil
	}
	uid, _ := id.AgentHostUID()
	gid, _ := id.AgentHostGID()
	g, err := engine.NewGrant(l.plan.Workspace, uid, gid, l.dirs.grantLocks())
	if err != nil {
		return err
	}
	g.Method, g.MethodReason = l.eng.GrantMethod(context.Background())
	l.grant, l.meta.Grant = g, g
	if err := l.runDir.WriteMeta(l.meta); err != nil {
		return err
	}
	rep, err := g.Apply()
	l.meta.Granted = &rep
	for _, s := range rep.Skipped {
		fmt.Fprintf(l.out, "agentbox: workspace grant: skipped %s\n", s)
	}
	if err != nil {
		return err
	}
	return l.runDir.WriteMeta(l.meta)
}

func (l *launch) create(ctx context.Context) error {
	if err := engine.BecomeSubreaper(); err != nil {
		return err
	}
	in, out, errf := l.stdFiles()
	if l.cfg.ProbesOnly {
		in, out = nil, nil // no agent: only agentbox writes stdout
	}
	l.sess = &engine.Session{
		Engine: l.eng, ID: l.runID, Bundle: l.runDir.Bundle(),
		ConsoleSocket: l.runDir.File("console.sock"), Terminal: l.plan.Terminal,
		In: in, Out: out, Err: errf, RawTerminal: l.cfg.RawTerminal,
	}
	if l.st.initEnd != nil {
		l.sess.ExtraFiles = []*os.File{l.st.initEnd}
	}
	pid, err := l.sess.Create(ctx)
	if err != nil {
		return err
	}
	l.meta.InitPid = pid
	if ns, err := selftest.ReadNamespaces(l.eng.ProcRoot(), strconv.Itoa(pid)); err == nil {
		l.meta.PidNS = ns["pid"]
	}
	return l.runDir.WriteMeta(l.meta)
}

// stdFiles returns the user's streams that are files, which the session
// copies to and from the sandbox (it never hands them over); a stream that
// is not a file is none (/dev/null to the sandbox).
func (l *launch) stdFiles() (in, out, errf *os.File) {
	in, _ = l.cfg.Stdin.(*os.File)
	out, _ = l.cfg.Stdout.(*os.File)
	errf, _ = l.cfg.Stderr.(*os.File)
	return in, out, errf
}

// teardown takes everything of the run down and verifies it, whatever
// state the run reached.
func (l *launch) teardown() *ledger.Teardown {
	if l.runDir == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := cleanRun(ctx, l.dirs, l.cfg.opener(), l.runDir, l.meta)
	return &rec
}

// trace prints a step's wall time on Stderr when AGENTBOX_TRACE=1, which
// is how the README's account of agentbox's own time was measured.
func (l *launch) trace(name string, start time.Time) {
	if l.cfg.getenv("AGENTBOX_TRACE") == "1" {
		fmt.Fprintf(l.out, "agentbox: trace: %-16s %8.2fms\n", name, float64(time.Since(start).Microseconds())/1000)
	}
}
