package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// verified is the Verify stage's value: the sandbox's probe results, the
// host's own checks of it, and their verdict (selftest.Judge).
type verified struct {
	results []selftest.Result
	host    []selftest.Result
	verdict selftest.Verdict
}

// all is every result: the sandbox's probes, then the host's checks.
func (v verified) all() []selftest.Result {
	return append(append([]selftest.Result{}, v.results...), v.host...)
}

// probeTimeout bounds the whole probe suite inside the sandbox.
const probeTimeout = 60 * time.Second

// ParseSelfTestFlags reads --allow-unknown PROBE=reason and
// --probe-target KIND=HOST:PORT into Config.AllowUnknown and
// Config.Targets; a malformed one, or an unknown probe, is a
// *policy.InputError naming the flag.
func ParseSelfTestFlags(allow, targets []string) (map[string]string, selftest.Targets, error) {
	au := map[string]string{}
	for _, a := range allow {
		name, reason, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(reason) == "" {
			return nil, selftest.Targets{}, &policy.InputError{Field: "--allow-unknown", Msg: fmt.Sprintf("%q: want PROBE=reason", a), Fix: "say why the probe may stay undecided; the reason is recorded"}
		}
		if _, found := selftest.Lookup(name); !found {
			return nil, selftest.Targets{}, &policy.InputError{Field: "--allow-unknown", Msg: fmt.Sprintf("no probe %q", name), Fix: "agentbox selftest lists the probes"}
		}
		au[name] = reason
	}
	var t selftest.Targets
	for _, pt := range targets {
		kind, addr, ok := strings.Cut(pt, "=")
		if _, _, err := net.SplitHostPort(addr); !ok || err != nil {
			return nil, t, &policy.InputError{Field: "--probe-target", Msg: fmt.Sprintf("%q: want KIND=IP:PORT", pt), Fix: "KIND is internet, dns, metadata or gateway"}
		}
		switch kind {
		case "internet":
			t.Internet = append(t.Internet, addr)
		case "dns":
			t.DNS = append(t.DNS, addr)
		case "metadata":
			t.Metadata = append(t.Metadata, addr)
		case "gateway":
			t.Gateway = addr
		default:
			return nil, t, &policy.InputError{Field: "--probe-target", Msg: fmt.Sprintf("unknown kind %q", kind), Fix: "use internet, dns, metadata or gateway"}
		}
	}
	return au, t, nil
}

// configureInit closes the launcher's copy of init's end of the channel
// (the runtime passed it on) and waits until the configuration, sent when
// the channel was made (openInit), is in the channel.
func (p *prepared) configureInit() error {
	p.initEnd.Close()
	p.serveDialer()
	return <-p.configSent
}

// sendInitConfig starts sending init its configuration (initConfig) on
// the channel openInit just made, before the runtime starts init: all of
// it is known by then, the channel holds it until init reads it, and init
// then finds it there as it starts, instead of waiting for the launcher's
// bookkeeping after the runtime's create. The send runs on its own, so
// that a configuration larger than the channel's buffer waits for init
// instead of blocking the create; configureInit collects its outcome, and
// a channel closed by teardown ends it.
func (p *prepared) sendInitConfig() error {
	ic := p.initConfig()
	if err := ic.Validate(); err != nil {
		return fmt.Errorf("init config: %w", err)
	}
	p.configSent = make(chan error, 1)
	go func() { p.configSent <- p.initCh.Configure(ic) }()
	return nil
}

// initConfig is init's configuration: the agent to start and the ids its
// children become (init runs under ids of its own), every probe with its
// targets and canaries, the Landlock plan, and to wait for the launcher's
// decision.
func (p *prepared) initConfig() selftest.InitConfig {
	cfg := p.l.cfg
	t := cfg.Targets
	c := p.canaries
	t.HostLoopback, t.HostAbstract, t.WorkspaceSocket = c.loopback, c.abstract, c.workspace
	var bridge *selftest.Bridge
	if p.plan.GatewaySocket != "" {
		bridge = &selftest.Bridge{Port: p.plan.GatewayLoopbackPort(), Socket: p.bridgeSocket()}
		if p.dialer != nil {
			bridge = &selftest.Bridge{Port: p.plan.GatewayLoopbackPort(), Dialer: true}
		}
		if t.Gateway == "" {
			t.Gateway = "127.0.0.1:" + strconv.Itoa(p.plan.GatewayLoopbackPort())
			t.GatewayHealth, t.GatewayRefuse = netpolicy.HealthPath, gatewayRefuseTarget
		}
	}
	ic := selftest.InitConfig{
		Version: selftest.ProtocolVersion, RunID: p.run.ID,
		Agent:    selftest.Command{Args: p.plan.Command, Env: p.plan.Env, Dir: p.plan.Cwd},
		Targets:  t,
		Canaries: c.config,
		Landlock: landlockPlan(p.plan),
		Bridge:   bridge,
		AllowEnv: p.plan.Agent.TokenVars,
		Kernel:   selftest.HostKernel(p.plan.Runtime.Name == "runsc"),
		// init waits for the launcher's word even in a probe-only run, so
		// that the host's verification sees the sandbox still alive.
		WaitGo: true,
	}
	for _, m := range p.plan.Mounts {
		if m.Kind == policy.KindInstall && m.ReadOnly {
			ic.Canaries.HomeInstalls = append(ic.Canaries.HomeInstalls, m.Destination)
		}
	}
	if cfg.ProbesOnly {
		ic.Agent = selftest.Command{}
	}
	if id := p.plan.Identity; id.Init.Split {
		ic.Agent.User = &selftest.Credential{UID: id.UID, GID: id.GID}
	}
	p.userInit(&ic)
	p.gvisorInit(&ic)
	if cfg.WeakenInit != nil {
		cfg.WeakenInit(&ic)
	}
	return ic
}

// landlockPlan is the plan's Landlock ruleset as init's configuration
// carries it.
func landlockPlan(p *policy.Plan) *selftest.LandlockPlan {
	ll := p.Landlock
	if ll == nil {
		return nil
	}
	out := &selftest.LandlockPlan{RestrictTCP: ll.RestrictTCP, ConnectTCP: ll.ConnectTCP, BindTCP: ll.BindTCP}
	for _, path := range ll.Paths {
		out.Paths = append(out.Paths, selftest.LandlockPath(path))
	}
	return out
}

// verify collects the probes' results, verifies the sandbox from the host
// while init waits, and judges them (selftest.Judge). With refuse set (a
// run), any failure aborts init and refuses the launch: the agent may
// start only when every probe and every host check passed, or an UNKNOWN
// was accepted with a reason, or an ALLOW is a recorded residual's.
func (p *prepared) verify(ctx context.Context, refuse bool) (verified, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	began := time.Now()
	early := p.verifyHostEarly()
	results, err := p.initCh.Results(ctx)
	host, ran := early.wait()
	if err != nil {
		return verified{}, fmt.Errorf("self-test: %w", err)
	}
	p.traceResults(began)
	hostBegan := time.Now()
	v := verified{results: results}
	if ran && early.inside == p.initCh.AgentPID() {
		v.host = host
		p.l.traceFor("self-test/verify beside", early.took)
	} else {
		v.host = p.verifyHost(p.initCh.AgentPID()) // user.go, user_darwin.go
	}
	if p.plan.Runtime.Name == "runsc" {
		selftest.SentrySubstitute(v.results, v.host) // gvisor.go names each difference
	}
	p.l.trace("self-test/verify", hostBegan)
	v.verdict = selftest.Judge(v.all(), p.excuses())
	p.noteSelfTest(len(v.verdict.Failed))
	p.l.evidenceProbes(v.all())
	if !refuse {
		return v, nil
	}
	failed := v.verdict.Failed
	p.l.printProbes(failed)
	if len(failed) > 0 {
		_ = p.initCh.Abort(fmt.Sprintf("%d probe(s) failed", len(failed)))
		return v, refusef("the boundary failed %d probe(s): %s; nothing was started%s", len(failed), strings.Join(probeNames(failed), ", "), probeFix(failed))
	}
	return v, nil
}

// earlyVerify is the host's verification of the sandbox run beside the
// probes, from the moment init reported its child ready as the agent.
type earlyVerify struct {
	done    chan struct{}
	started bool
	inside  int // the agent-to-be it verified, as init named it
	host    []selftest.Result
	took    time.Duration
}

// verifyHostEarly has the host verify the sandbox as soon as init
// reports its child ready as the agent (selftest.Launcher.OnAgentReady),
// before the probes: from then on the child has the credentials,
// namespaces and filter it executes the agent with (it runs the probes
// itself, which change none of them, and checks that again before the
// exec), so what the host reads of it and of init is what it would read
// after the last probe, and the reading is off the wait for the last
// result. The callback runs on the goroutine that reads the results and
// only starts the verification.
func (p *prepared) verifyHostEarly() *earlyVerify {
	e := &earlyVerify{done: make(chan struct{})}
	p.initCh.OnAgentReady(func(inside int) {
		e.started, e.inside = true, inside
		go func() {
			defer close(e.done)
			began := time.Now()
			e.host = p.verifyHost(inside) // user.go, user_darwin.go
			e.took = time.Since(began)
		}()
	})
	return e
}

// wait returns the early verification's results once it has ended, and
// whether it ran at all.
func (e *earlyVerify) wait() ([]selftest.Result, bool) {
	if !e.started {
		return nil, false
	}
	<-e.done
	return e.host, true
}

// traceResults splits the wait for init's results that began at began:
// until the first result (init's start, its child's, the first probe),
// the probes, and what came after the last one (the child's word that
// the probes are done).
func (p *prepared) traceResults(began time.Time) {
	first, last := p.initCh.ResultTimes()
	if first.IsZero() {
		return
	}
	p.l.traceFor("self-test/first result", first.Sub(began))
	p.l.traceFor("self-test/probes", last.Sub(first))
	p.l.traceFor("self-test/probes done", time.Since(last))
}

// excuses are what may excuse a result: the UNKNOWNs the user accepts,
// and the probes the plan's residuals name.
func (p *prepared) excuses() selftest.Excuses {
	ex := selftest.Excuses{AllowUnknown: p.l.cfg.AllowUnknown}
	for _, r := range p.plan.Residuals {
		ex.Residual = append(ex.Residual, r.Probes...)
	}
	return ex
}

// sandboxPIDs are init's host pid and that of its child that will become
// the agent (init names it by its pid inside the sandbox); an agent pid
// that cannot be found stays 0, which makes the host checks UNKNOWN. The
// pid found is kept for the hand-over, which names the same process.
func (p *prepared) sandboxPIDs() selftest.SandboxPIDs { return p.sandboxPIDsOf(p.initCh.AgentPID()) }

// sandboxPIDsOf is sandboxPIDs for the agent-to-be init names inside.
func (p *prepared) sandboxPIDsOf(inside int) selftest.SandboxPIDs {
	pids := selftest.SandboxPIDs{Init: p.sess.Pid()}
	if p.plan.Runtime.Name == "runsc" {
		// runsc's pid file names the sandbox process, the Sentry: the
		// agent has no host process of its own.
		pids.Sentry = true
		return pids
	}
	if inside > 0 {
		if p.agent.inside != inside || p.agent.host == 0 {
			host, _ := agentHostPID(p.eng.ProcRoot(), pids.Init, inside)
			p.agent.inside, p.agent.host = inside, host
		}
		pids.Agent = p.agent.host
	}
	return pids
}

// handedOver is the HandOver stage's value: the agent's Landlock status,
// as init reported it once the agent started.
type handedOver struct {
	landlock *selftest.LandlockStatus
}

// handOver tells init to start the agent and records its Landlock status.
func (p *prepared) handOver(ctx context.Context) (handedOver, error) {
	p.denials.agentStarted(p.sandboxPIDs())
	if err := p.initCh.Go(); err != nil {
		return handedOver{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	started, err := p.initCh.Started(ctx)
	if err != nil {
		return handedOver{}, fmt.Errorf("agent did not start: %w", err)
	}
	return handedOver{landlock: &started.Landlock}, nil
}

// printProbes prints the failed results in words for the user, unless
// --json asked for none; the evidence channel has every result.
func (l *launch) printProbes(failed []selftest.Result) {
	if l.cfg.JSON {
		return
	}
	for _, r := range failed {
		fmt.Fprintln(l.out, ProbeLine(r))
		fmt.Fprintf(l.out, "agentbox: probe %s: expected %s, got %s (%s): %s\n", r.Probe, r.Expect, r.Decision, ledger.Printable(r.Observed), ledger.Printable(r.Detail))
	}
}

// ProbeLine is a result in the contract's JSON shape (DESIGN.md §5).
func ProbeLine(r selftest.Result) string {
	data, _ := json.Marshal(ledgerProbes([]selftest.Result{r})[0])
	return string(data)
}

// probeFix says what to do next: find what the host lacks, and, for a
// probe that could not decide, how to accept that with a reason.
func probeFix(failed []selftest.Result) string {
	fix := "; 'agentbox doctor' checks what this host provides"
	if slices.ContainsFunc(failed, func(r selftest.Result) bool { return r.Decision == selftest.Unknown }) {
		fix += ", and --allow-unknown PROBE=reason accepts a probe that cannot decide here (recorded)"
	}
	return fix
}

func probeNames(rs []selftest.Result) []string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Probe
	}
	return names
}

// ledgerProbes converts results for the run record.
func ledgerProbes(rs []selftest.Result) []ledger.Probe {
	out := make([]ledger.Probe, len(rs))
	for i, r := range rs {
		out[i] = ledger.Probe{Probe: r.Probe, Target: r.Target, Expect: string(r.Expect), Decision: string(r.Decision), Observed: r.Observed, RunID: r.RunID, Evidence: r.Evidence}
	}
	return out
}
