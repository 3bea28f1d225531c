package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/seccomp/profiles"
	"github.com/agentbox/agentbox/selftest"
	"github.com/agentbox/agentbox/spec"
)

// prepared is the Prepare stage's value: everything made from the plan, up
// to a created, not yet started sandbox whose init holds its
// configuration. Its steps fill it in order; whatever of it exists when a
// step fails, teardown takes down (tearDown reads only these fields).
type prepared struct {
	*planned
	runDir *engine.RunDir
	meta   engine.Meta
	ids    idMap
	// spec is the rendered spec: what the self-audit judges. bundled is
	// the bundle's, spec with the denial log's notify rules (denials.go),
	// nil when the run has none; bundleSpec says which.
	spec    *specs.Spec
	bundled *specs.Spec
	// findings are the self-audit's, accepted ones included.
	findings []audit.Finding
	// advice is the runtime step's verdicts (runtimecheck.go).
	advice   runtimeAdvice
	eng      engine.Engine
	grant    *engine.Grant
	gw       *netpolicy.RunGateway
	denials  denialLog // the seccomp listener (denials.go)
	canaries canaries
	// init is the channel to agentbox-init; initEnd its end that becomes
	// init's fd 3.
	initCh  *selftest.Launcher
	initEnd *os.File
	// configSent is the outcome of sending init its configuration.
	configSent chan error
	// dialer is init's bridge dialer under gVisor (gvisor.go); nil else.
	dialer *gvisorBridge
	sess   *engine.Session
	// sentryFilter is the bundle's seccomp filter, compiled, which init's
	// children load under gVisor (gvisor.go); nil else.
	sentryFilter []byte
	// agent is the agent's starter: its pid inside and on the host.
	agent struct{ inside, host int }
	// user is what an --isolation user run holds (user.go).
	user *userRun
}

// runRecipe runs the whole Prepare stage: the pure prefix, then the steps
// that make things from the plan, those of the target the plan is for
// (user.go for TargetUser, else makeSteps), with the cgroup migration
// lock kept warm until the sandbox is created.
func (p *prepared) runRecipe(ctx context.Context) error {
	warmUp() // warmup.go
	if !p.dry {
		// The runtime's move of its process into the run's cgroups finds
		// the kernel's migration lock warm (engine/cgroupwarm_linux.go).
		defer engine.WarmCgroupMigration()()
	}
	if err := p.l.runSteps(ctx, p.planSteps()); err != nil {
		return err
	}
	if p.run.Target == policy.TargetUser {
		return p.l.runSteps(ctx, p.userSteps(ctx))
	}
	return p.l.runSteps(ctx, p.makeSteps(ctx))
}

// makeSteps are the Prepare stage's steps after the plan, for a sandbox
// an OCI runtime runs. Dry (agentbox spec) they are the render and the
// runtime's advisory verdicts, with the id slot a run would get (the
// allocator's Peek): nothing is made, leased or started.
func (p *prepared) makeSteps(ctx context.Context) []namedStep {
	checkRuntime := func() error { return p.checkRuntime(ctx) }
	if p.dry {
		return []namedStep{{name: "ids", run: p.mapIDs}, {name: "render", run: p.render}, {name: "runtime", run: checkRuntime}}
	}
	return []namedStep{
		{name: "gc", run: p.collectStale},
		{name: "run directory", run: p.createRunDir},
		{name: "ids", run: p.mapIDs},
		{name: "render", run: p.render},
		{name: "runtime", run: checkRuntime},
		// The self-audit judges the rendered spec (p.spec) while the
		// denial log makes the bundle's from it (p.bundled) and the
		// host's canaries are planted: each only reads the spec, and none
		// makes a path the audit resolves (the gateway's socket, the init
		// binary's copy and the bundle's files, which are binds' sources,
		// come after its verdict, as before).
		sideBySide("audit beside the denial log and the canaries",
			[]namedStep{{name: "audit", run: p.auditSpec}},
			[]namedStep{{name: "denial log", run: p.startDenialLog}, {name: "canaries", run: p.plantHostCanaries}},
		),
		{name: "gateway", run: p.startGateway},
		{name: "init binary", run: func() error { return p.initBin.install() }},
		{name: "bundle", run: p.writeBundle},
		{name: "lsm", run: p.loadLSM},
		{name: "workspace grant", run: p.grantWorkspace},
		{name: "workspace canary", run: p.plantWorkspaceCanary},
		{name: "init channel", run: p.openInit},
		{name: "create", run: func() error { return p.create(ctx) }},
		{name: "configure init", run: p.configureInit},
	}
}

// collectStale cleans what crashed runs left before this one starts.
func (p *prepared) collectStale() error {
	recs, err := CollectGarbage(context.Background(), p.dirs, p.l.cfg.Engine)
	for _, r := range recs {
		fmt.Fprintf(p.l.out, "agentbox: cleaned stale run %s: %s\n", r.RunID, r.Notes)
	}
	if err != nil {
		fmt.Fprintf(p.l.out, "agentbox: warning: cleaning stale runs: %v\n", err)
	}
	return nil
}

// createRunDir makes the state directory, the run root and the run's
// directory where the plan put it, and records the run in meta.json.
func (p *prepared) createRunDir() error {
	if err := p.dirs.ensure(); err != nil {
		return err
	}
	d, err := engine.CreateRunDir(p.dirs.RunRoot, p.run.ID)
	if err != nil {
		return err
	}
	p.runDir = d
	if d.Path != p.run.Dir || d.Bundle() != p.run.Bundle {
		return fmt.Errorf("run directory %s is not where the plan put it (%s)", d.Path, p.run.Dir)
	}
	p.meta = engine.Meta{RunID: p.run.ID, LauncherPid: os.Getpid(), Started: time.Now().UTC(), Command: p.l.argv(), Canaries: p.canaryNames()}
	if p.plan.Identity.IDMap.Mode == policy.IDSlot {
		// The id lease the ids step takes is the run's own id's: named
		// here, before it exists (gc's release passes over a lease that
		// is not there), it costs the ids step no write of its own, and
		// no crash leaves a lease that meta.json does not name.
		p.meta.Lease = p.run.ID
	}
	return p.runDir.WriteMeta(p.meta)
}

// render is the plan's spec, with the seccomp filter of the plan's
// profile for this machine's architecture and the run's id maps.
func (p *prepared) render() error {
	s, err := renderSpec(p.plan, p.ids)
	if err != nil {
		return err
	}
	p.spec = s
	if p.spec.Linux != nil {
		p.meta.Cgroup = p.spec.Linux.CgroupsPath
	}
	return nil
}

// renderSpec renders plan with the inputs it names but does not hold.
func renderSpec(plan *policy.Plan, ids idMap) (*specs.Spec, error) {
	prof, ok := profiles.Named(plan.Seccomp)
	if !ok {
		return nil, fmt.Errorf("the plan names seccomp profile %q, which agentbox does not have", plan.Seccomp)
	}
	sc, err := prof.NativeOCI()
	if err != nil {
		return nil, err
	}
	return spec.FromPlan(plan, spec.Extras{Seccomp: sc, UIDMappings: ids.uids, GIDMappings: ids.gids})
}

// startGateway starts the run's gateway at the plan's socket with the
// run's token. The real keys stay in this process; the sandbox gets the
// per-run token, revoked when the gateway stops.
func (p *prepared) startGateway() error {
	if p.plan.GatewaySocket == "" {
		return nil
	}
	cfg, err := gatewayConfig(p.policy, p.run)
	if err != nil {
		return err
	}
	gw, err := netpolicy.StartRun(p.runDir.Path, cfg, netpolicy.WithOnDeny(p.denials.streamGateway(p.l.evidenceDenial)))
	if err != nil {
		return fmt.Errorf("start the gateway: %w", err)
	}
	p.gw = gw
	if gw.Socket != p.plan.GatewaySocket {
		return fmt.Errorf("the gateway listens at %s, not at the plan's %s", gw.Socket, p.plan.GatewaySocket)
	}
	return nil
}

// bundleSpec is the spec the bundle holds and the record digests: the
// rendered one with the denial log's notify rules where it has them.
func (p *prepared) bundleSpec() *specs.Spec {
	if p.bundled != nil {
		return p.bundled
	}
	return p.spec
}

func (p *prepared) writeBundle() error {
	rt := engine.Runtime{Name: p.plan.Runtime.Name, Path: p.plan.Runtime.Path, Root: p.dirs.runtimeRoot(p.plan.Runtime.Name), UserNS: p.ids.userNS}
	rt.Hide = engine.HiddenUnified(rt.Name, p.host.EUID == 0)
	rt.Helper = p.host.InitPath // a containerd shim's runc helper (engine/containerd)
	if p.advice.rt.Path == rt.Path {
		rt.Version = p.advice.rt.Version // read by the runtime step: GrantMethod runs nothing for it
	}
	// meta.json gets the runtime with the workspace canary's write
	// (plantWorkspaceCanary),
	// which every run makes before its create: no container of the run can
	// exist before that, and a gc of a run without one deletes none.
	p.meta.Runtime, p.eng = rt, p.l.cfg.opener()(rt)
	s := p.bundleSpec()
	if ns := p.ids.userNS; ns != nil {
		var err error
		if s, err = ns.Spec(s); err != nil {
			return err
		}
	}
	if weaken := p.l.cfg.Weaken; weaken != nil {
		// A deep copy: a test's change never reaches p.bundleSpec(), the
		// recorded one.
		var cp specs.Spec
		data, err := json.Marshal(s)
		if err == nil {
			err = json.Unmarshal(data, &cp)
		}
		if err != nil {
			return err
		}
		weaken(&cp)
		s = &cp
	}
	if err := p.compileSentryFilter(s); err != nil {
		return err
	}
	return p.eng.WriteBundle(p.runDir.Bundle(), withCompiledSeccomp(rt, s), p.plan.Rootfs)
}

// loadLSM loads agentbox's AppArmor profile (root only; the plan chose
// AppArmor for an ordinary user only when the profile is already loaded).
// SELinux needs nothing loaded: the labels are in the spec.
func (p *prepared) loadLSM() error {
	if p.plan.LSM.Kind != policy.LSMAppArmor || p.host.EUID != 0 {
		return nil
	}
	text, err := apparmor.Render(p.plan.LSM.AppArmorProfile)
	if err != nil {
		return err
	}
	return apparmor.Load(p.plan.LSM.AppArmorProfile, text)
}

// grantWorkspace hands a root-owned workspace to the agent's unprivileged
// host uid for the run (see engine.Grant); the grant is in meta.json
// before it touches a file, so a crash leaves enough to revoke it. What
// the grant did (meta.Granted, for the record) goes into meta.json with
// the next step's first act (plantWorkspaceCanary), not in a write of its
// own.
func (p *prepared) grantWorkspace() error {
	id := p.plan.Identity
	if !id.GrantWorkspace {
		return nil
	}
	uid, _ := policy.HostID(p.ids.uids, id.UID)
	gid, _ := policy.HostID(p.ids.gids, id.GID)
	part := p.l.parts("workspace grant")
	g, err := engine.NewGrant(p.plan.Workspace, uid, gid, p.dirs.grantLocks())
	if err != nil {
		return err
	}
	g.Method, g.MethodReason = p.eng.GrantMethod(context.Background())
	part("method")
	p.grant, p.meta.Grant = g, g
	if err := p.runDir.WriteMeta(p.meta); err != nil {
		return err
	}
	part("meta")
	rep, err := g.Apply()
	part("apply")
	p.meta.Granted = &rep
	for _, s := range rep.Skipped {
		fmt.Fprintf(p.l.out, "agentbox: workspace grant: skipped %s\n", s)
	}
	return err
}

// plantCanaries plants the canaries the run chose before planning: the
// host's (plantHostCanaries), then the workspace's (plantWorkspaceCanary).
// The OCI recipe (makeSteps) runs the two as steps of their own.
func (p *prepared) plantCanaries() error {
	if err := p.plantHostCanaries(); err != nil {
		return err
	}
	return p.plantWorkspaceCanary()
}

// canaryNames are the files and the workspace socket plantCanaries plants,
// which meta.json names from the run directory's first write on, before
// any of them exists (gc's removal passes over one that is not there), so
// that a crash at any point leaves none of them unnamed.
func (p *prepared) canaryNames() []string {
	names := canaryFiles(p.host.Home, p.run.Dir, p.run.ID)
	if p.ws.root != "" {
		names = append(names, filepath.Join(p.ws.root, p.canary.socket))
	}
	return names
}

// plantHostCanaries plants the environment variable, the files in the
// home and the run directory, and the network listeners. None of them is
// a path the self-audit reads (a bind's source), so the OCI recipe plants
// them beside it.
func (p *prepared) plantHostCanaries() error {
	c := &p.canaries
	c.plantEnvCanary(p.canary)
	if err := c.plantFiles(p.host.Home, p.runDir.Path, p.run.ID); err != nil {
		return err
	}
	return c.plantListeners(p.run.ID)
}

// plantWorkspaceCanary plants the workspace socket the plan covers, after
// the workspace grant, whose walk never meets it. First it writes
// meta.json with what the bundle and the grant steps added to it (the
// runtime, the grant's report): no container of the run can exist before
// this write, and a gc of a run without it deletes none.
func (p *prepared) plantWorkspaceCanary() error {
	if err := p.runDir.WriteMeta(p.meta); err != nil {
		return err
	}
	if p.ws.root == "" {
		return nil
	}
	return p.plantWorkspaceSocket()
}

// openInit makes the init channel, whose other end becomes fd 3 of init,
// and starts sending init its configuration on it (sendInitConfig).
func (p *prepared) openInit() error {
	lc, end, err := selftest.NewLauncher()
	if err != nil {
		return err
	}
	p.initCh, p.initEnd = lc, end
	if err := p.openDialer(); err != nil {
		return err
	}
	return p.sendInitConfig()
}

func (p *prepared) create(ctx context.Context) error {
	if err := p.becomeSubreaper(); err != nil { // user.go, user_darwin.go
		return err
	}
	cfg := p.l.cfg
	in, out, errf := cfg.stdFiles()
	if cfg.ProbesOnly {
		in, out = nil, nil // no agent: only agentbox writes stdout
	}
	p.sess = &engine.Session{
		Engine: p.eng, ID: p.run.ID, Bundle: p.runDir.Bundle(),
		ConsoleSocket: p.runDir.File("console.sock"), Terminal: p.plan.Terminal,
		In: in, Out: out, Err: errf, RawTerminal: cfg.RawTerminal,
		ExtraFiles: p.extraFiles(),
		Held:       true, // agentbox-init waits on its channel for the go
		ExitReport: p.initCh.Wait,
	}
	pid, err := p.sess.Create(ctx)
	if err != nil {
		return err
	}
	p.meta.InitPid = pid
	p.meta.RuntimePid, p.meta.RuntimeStart = p.sess.Runtime()
	if ns, err := selftest.ReadNamespaces(p.eng.ProcRoot(), strconv.Itoa(pid)); err == nil {
		p.meta.PidNS = ns["pid"]
	}
	return p.runDir.WriteMeta(p.meta)
}
