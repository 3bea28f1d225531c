package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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
	"github.com/agentbox/agentbox/spec"
)

// launch carries one sandbox through the pipeline of DESIGN.md §3. Each
// method is one named step; run.go and spec.go call them in order.
type launch struct {
	io    stdio
	flags policyFlags
	argv  []string
	json  bool
	// ev is the --evidence channel; rawTerminal (--raw-terminal) turns the
	// terminal filter off.
	ev          evidenceChannel
	rawTerminal bool

	runID  string
	dirs   dirs
	policy policy.Policy
	// sources are the policy files the policy came from.
	sources []policy.Loaded
	host    policy.Host
	ids     idAllocation
	plan    *policy.Plan
	spec    *specs.Spec
	runDir  *engine.RunDir
	rt      engine.Runtime
	meta    engine.Meta
	grant   *engine.Grant
	sess    *engine.Session
	st      selfTest
	gw      *netpolicy.RunGateway
	agent   agents.Launch
	ws      workspaceState
	// findings are the self-audit's, accepted ones included.
	findings []audit.Finding
	rec      ledger.Record

	// allowUnknown and probeTargets are the self-test flags, parsed into st.
	allowUnknown, probeTargets []string
	// probesOnly makes a self-test run: every probe, and no agent.
	probesOnly bool
	// weaken, set only by tests in this package, changes the spec written
	// to the bundle after the self-audit passed, so that a test can prove
	// each probe reports ALLOW when its layer is missing. No flag, file or
	// environment variable reaches it.
	weaken func(*specs.Spec)
}

// stepError is a failed step with the exit code it maps to.
type stepError struct {
	step string
	code int
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// step runs fn and classifies its error: bad input is exit 2, a refused
// boundary 3, anything the host could not do 4.
func step(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	trace(name, start)
	pauseAfter(name)
	if err == nil {
		return nil
	}
	code := exitHost
	var in *policy.InputError
	var ref *refusal
	var untrusted *policy.UntrustedError
	switch {
	case errors.As(err, &in):
		code = exitUsage
	case errors.As(err, &ref), errors.As(err, &untrusted):
		code = exitRefused
	}
	return &stepError{step: name, code: code, err: err}
}

// namedStep is one step of a recipe: its name (for errors, traces and
// pauses) and what it does.
type namedStep struct {
	name string
	run  func() error
}

// runSteps runs steps in order and stops at the first failure, or before
// the next step once ctx has ended (a signal during setup).
func runSteps(ctx context.Context, steps []namedStep) error {
	for _, s := range steps {
		if ctx.Err() != nil {
			return step(s.name, func() error { return &refusal{"interrupted before the sandbox started"} })
		}
		if err := step(s.name, s.run); err != nil {
			return err
		}
	}
	return nil
}

// refusal is a boundary the launch will not hand over.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func (l *launch) loadPolicy() error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	if l.policy, l.sources, err = l.flags.load(cwd, l.io.Getenv); err != nil {
		return err
	}
	l.st.allowUnknown, l.st.targets, err = parseSelfTestFlags(l.allowUnknown, l.probeTargets)
	return err
}

func (l *launch) captureHost() error {
	h, err := host.Capture()
	if err != nil {
		return err
	}
	l.host = h
	if l.dirs, err = findDirs(l.io.Getenv); err != nil {
		return err
	}
	if err := l.dirs.ensure(); err != nil {
		return err
	}
	init, err := findInit(l.io.Getenv)
	if err != nil {
		return err
	}
	l.host.InitPath, err = sandboxReachable(init, l.dirs.runRoot)
	return err
}

func (l *launch) createRunDir() error {
	l.runID = ledger.NewRunID()
	d, err := engine.CreateRunDir(l.dirs.runRoot, l.runID)
	if err != nil {
		return err
	}
	l.runDir = d
	l.meta = engine.Meta{RunID: l.runID, LauncherPid: os.Getpid(), Started: time.Now().UTC(), Command: l.argv}
	return l.runDir.WriteMeta(l.meta)
}

func (l *launch) resolvePlan() error {
	bundle := filepath.Join(os.TempDir(), "agentbox-bundle")
	if l.runDir != nil {
		bundle = l.runDir.Bundle()
	}
	plan, err := policy.Resolve(l.policy, l.argv, l.host, bundle)
	if err != nil {
		return err
	}
	l.plan = plan
	l.sayResiduals()
	return nil
}

func (l *launch) render() error {
	sc, err := profiles.Default().NativeOCI()
	if err != nil {
		return err
	}
	x := spec.Extras{Seccomp: sc}
	if !l.plan.Identity.Rootless {
		x.CgroupsPath = "/agentbox/" + l.runIDOrPlaceholder()
	}
	s, err := spec.FromPlan(l.plan, x)
	if err != nil {
		return err
	}
	l.spec = s
	return nil
}

// runIDOrPlaceholder names the cgroup; `agentbox spec` runs nothing and
// has no run id, so its config shows where a run's cgroup would go.
func (l *launch) runIDOrPlaceholder() string {
	if l.runID == "" {
		return "RUN_ID"
	}
	return l.runID
}

func (l *launch) writeBundle() error {
	l.rt = engine.Runtime{Name: l.plan.Runtime.Name, Path: l.plan.Runtime.Path, Root: l.dirs.runtimeRoot(l.plan.Runtime.Name), UserNS: l.ids.userNS}
	if hide := engine.HiddenUnified(l.rt.Name, l.host.EUID == 0); hide != "" {
		l.rt.Hide = hide
	}
	l.rt.Helper = l.host.InitPath // hides that mount, lays out nested binds
	l.meta.Runtime = l.rt
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
	if l.weaken != nil {
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
		l.weaken(&cp)
		s = &cp
	}
	return l.rt.WriteBundle(l.runDir.Bundle(), s, l.plan.Rootfs)
}

// sayResiduals tells the user, before anything runs, which layers this
// host or this policy makes weaker; the ledger records them too. With
// --json they are in the run's record instead.
func (l *launch) sayResiduals() {
	if l.json || l.runDir == nil {
		return
	}
	for _, r := range l.plan.Residuals {
		fmt.Fprintf(l.io.Err, "agentbox: residual %s: %s\n", r.Code, r.Reason)
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
	g.Method, g.MethodReason = engine.GrantMethod(context.Background(), l.rt)
	l.grant, l.meta.Grant = g, g
	if err := l.runDir.WriteMeta(l.meta); err != nil {
		return err
	}
	rep, err := g.Apply()
	l.meta.Granted = &rep
	for _, s := range rep.Skipped {
		fmt.Fprintf(l.io.Err, "agentbox: workspace grant: skipped %s\n", s)
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
	in, out, errf := stdFiles(l.io)
	if l.probesOnly {
		in, out = nil, nil // no agent: only agentbox writes stdout
	}
	l.sess = &engine.Session{
		Runtime: l.rt, ID: l.runID, Bundle: l.runDir.Bundle(),
		ConsoleSocket: l.runDir.File("console.sock"), Terminal: l.plan.Terminal,
		In: in, Out: out, Err: errf, RawTerminal: l.rawTerminal,
	}
	if l.st.initEnd != nil {
		l.sess.ExtraFiles = []*os.File{l.st.initEnd}
	}
	pid, err := l.sess.Create(ctx)
	if err != nil {
		return err
	}
	l.meta.InitPid = pid
	if ns, err := engine.NamespaceInode(pid, "pid"); err == nil {
		l.meta.PidNS = ns
	}
	return l.runDir.WriteMeta(l.meta)
}

// stdFiles returns the launcher's own streams, which the session copies to
// and from the sandbox (it never hands them over).
func stdFiles(io stdio) (in, out, errf *os.File) {
	in, out, errf = os.Stdin, os.Stdout, os.Stderr
	if f, ok := io.In.(*os.File); ok {
		in = f
	}
	if f, ok := io.Out.(*os.File); ok {
		out = f
	}
	if f, ok := io.Err.(*os.File); ok {
		errf = f
	}
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
	rec := cleanRun(ctx, l.dirs, l.runDir, l.meta)
	return &rec
}

// pauseAfter stops the launcher (SIGSTOP) after the step named by
// AGENTBOX_TEST_PAUSE_AFTER, so that failure-injection tests can SIGKILL it
// at an exact point of the pipeline and check what gc finds. It only ever
// stops the launcher itself.
func pauseAfter(name string) {
	if os.Getenv("AGENTBOX_TEST_PAUSE_AFTER") == name {
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	}
}

// tracing prints each step's wall time on stderr when AGENTBOX_TRACE=1,
// which is how the README's account of agentbox's own time was measured.
var tracing = os.Getenv("AGENTBOX_TRACE") == "1"

func trace(name string, start time.Time) {
	if tracing {
		fmt.Fprintf(os.Stderr, "agentbox: trace: %-16s %8.2fms\n", name, float64(time.Since(start).Microseconds())/1000)
	}
}
