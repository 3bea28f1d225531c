package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// selfTest is the launcher's side of the self-test of one sandbox: the
// canaries, the channel to agentbox-init, the probe results and the host's
// own verification.
type selfTest struct {
	canaries canaries
	init     *selftest.Launcher
	initEnd  *os.File
	results  []selftest.Result
	host     []selftest.Result
	landlock *selftest.LandlockStatus
	// allowUnknown are probes whose UNKNOWN the user accepts, with reasons.
	allowUnknown map[string]string
	targets      selftest.Targets
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

// plantCanaries plants the file and network canaries of this run and
// records the files, so that a crashed run's gc removes them.
func (l *launch) plantCanaries() error {
	c := &l.st.canaries
	if err := c.plantFiles(l.host.Home, l.runDir.Path, l.runID); err != nil {
		return err
	}
	l.meta.Canaries = c.files
	if err := l.runDir.WriteMeta(l.meta); err != nil {
		return err
	}
	return c.plantListeners(l.runID)
}

// openInit makes the init channel; its other end becomes fd 3 of init.
func (l *launch) openInit() error {
	lc, end, err := selftest.NewLauncher()
	if err != nil {
		return err
	}
	l.st.init, l.st.initEnd = lc, end
	return nil
}

// configureInit sends init its configuration: the agent to start and the
// ids its children become (init runs under ids of its own), every probe
// with its targets and canaries, the Landlock plan, and to wait for the
// launcher's decision.
func (l *launch) configureInit() error {
	l.st.initEnd.Close()
	t := l.st.targets
	t.HostLoopback, t.HostAbstract = l.st.canaries.loopback, l.st.canaries.abstract
	t.WorkspaceSocket = l.st.canaries.workspace
	var bridge *selftest.Bridge
	if l.gw != nil {
		bridge = &selftest.Bridge{Port: netpolicy.DefaultPort, Socket: policy.GatewaySocket}
		if t.Gateway == "" {
			t.Gateway = "127.0.0.1:" + strconv.Itoa(netpolicy.DefaultPort)
			t.GatewayHealth, t.GatewayRefuse = netpolicy.HealthPath, gatewayRefuseTarget
		}
	}
	cfg := selftest.InitConfig{
		Version: selftest.ProtocolVersion, RunID: l.runID,
		Agent:    selftest.Command{Args: l.plan.Command, Env: l.plan.Env, Dir: l.plan.Cwd},
		Targets:  t,
		Canaries: l.st.canaries.config,
		Landlock: landlockPlan(l.plan, l.gw != nil),
		Bridge:   bridge,
		AllowEnv: l.agent.TokenVars(),
		// init waits for the launcher's word even in a probe-only run, so
		// that the host's verification sees the sandbox still alive.
		WaitGo: true,
	}
	if l.cfg.ProbesOnly {
		cfg.Agent = selftest.Command{}
	}
	if id := l.plan.Identity; id.Init.Split {
		cfg.Agent.User = &selftest.Credential{UID: id.UID, GID: id.GID}
	}
	if l.cfg.WeakenInit != nil {
		l.cfg.WeakenInit(&cfg)
	}
	return l.st.init.Configure(cfg)
}

// landlockPlan limits the agent's file system access to the plan's paths,
// where no SELinux or AppArmor label confines it, and its TCP to the
// gateway's port unless the policy allows local TCP.
func landlockPlan(p *policy.Plan, gateway bool) *selftest.LandlockPlan {
	if p.LSM.Kind != policy.LSMNone {
		return nil
	}
	paths := []selftest.LandlockPath{
		{Path: "/etc"},
		{Path: "/proc"},
		{Path: "/sys", Optional: true},
		{Path: "/dev", Write: true, IoctlDev: true},
	}
	for link := range p.Rootfs.Symlinks {
		paths = append(paths, selftest.LandlockPath{Path: link, Optional: true})
	}
	for _, m := range p.Mounts {
		paths = append(paths, selftest.LandlockPath{Path: m.Destination, Write: !m.ReadOnly})
	}
	sort.Slice(paths, func(i, j int) bool { return paths[i].Path < paths[j].Path })
	plan := &selftest.LandlockPlan{Paths: paths}
	if gateway && !p.Network.LocalTCP {
		// TCP only to the gateway's port (Landlock ABI 4 and later; older
		// kernels leave TCP to the network namespace, which the ABI records).
		port := uint16(netpolicy.DefaultPort)
		plan.RestrictTCP, plan.ConnectTCP, plan.BindTCP = true, []uint16{port}, []uint16{port}
	}
	return plan
}

// checkBoundary collects the probes' results, verifies the sandbox from the
// host while init waits, and lets the agent start only when every probe and
// every host check passed (or an UNKNOWN was accepted with a reason).
func (l *launch) checkBoundary(ctx context.Context) error {
	if err := l.collectProbes(ctx); err != nil {
		return err
	}
	failed := l.failedProbes()
	l.printProbes(failed)
	if len(failed) > 0 {
		_ = l.st.init.Abort(fmt.Sprintf("%d probe(s) failed", len(failed)))
		return refusef("the boundary failed %d probe(s): %s; nothing was started%s", len(failed), strings.Join(probeNames(failed), ", "), probeFix(failed))
	}
	return nil
}

// collectProbes reads init's probe results and verifies the sandbox from
// the host while init waits.
func (l *launch) collectProbes(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	results, err := l.st.init.Results(ctx)
	if err != nil {
		return fmt.Errorf("self-test: %w", err)
	}
	l.st.results = results
	l.st.host = selftest.VerifyHost(l.eng.ProcRoot(), l.sandboxPIDs(), l.hostState())
	l.evidenceProbes()
	return nil
}

// sandboxPIDs are init's host pid and that of its child that will become
// the agent (init names it by its pid inside the sandbox); an agent pid
// that cannot be found stays 0, which makes the host checks UNKNOWN.
func (l *launch) sandboxPIDs() selftest.SandboxPIDs {
	p := selftest.SandboxPIDs{Init: l.sess.Pid()}
	if inside := l.st.init.AgentPID(); inside > 0 {
		p.Agent, _ = selftest.HostPID(l.eng.ProcRoot(), p.Init, inside)
	}
	return p
}

// handOver tells init to start the agent and records its Landlock status.
func (l *launch) handOver(ctx context.Context) error {
	if err := l.st.init.Go(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	started, err := l.st.init.Started(ctx)
	if err != nil {
		return fmt.Errorf("agent did not start: %w", err)
	}
	l.st.landlock = &started.Landlock
	return nil
}

func (l *launch) hostState() selftest.HostState {
	hs, err := selftest.ReadHostState(l.eng.ProcRoot())
	if err != nil {
		hs = selftest.HostState{} // VerifyHost then reports UNKNOWN
	}
	hs.Homes, hs.RunID = l.host.Homes, l.runID
	// The runtime's own mounts: the bundle's root, the default device nodes
	// it binds from the host in a user namespace, and /dev/null over each
	// masked /proc file.
	hs.AllowSources = append(hs.AllowSources, filepath.Join(l.runDir.Bundle(), l.spec.Root.Path))
	hs.AllowSources = append(hs.AllowSources, runtimeDevices...)
	for _, m := range l.plan.Mounts {
		// Every bind of the plan is intended; the read-only system binds too.
		// VerifyHost still refuses homes, sockets and the host root among them.
		if m.Source != "" {
			hs.AllowSources = append(hs.AllowSources, m.Source)
		}
	}
	return hs
}

// runtimeDevices are the device nodes an OCI runtime binds into a sandbox
// with a user namespace (it cannot create them there).
var runtimeDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// failedProbes are the results that refuse the launch: any that did not
// get its expected decision, except an UNKNOWN accepted with a reason and
// an ALLOW that a recorded residual of the plan names (init sharing the
// agent's uid where the sandbox has one id).
func (l *launch) failedProbes() []selftest.Result {
	var out []selftest.Result
	for _, r := range l.st.all() {
		if r.Passed() {
			continue
		}
		if _, ok := l.st.allowUnknown[r.Probe]; ok && r.Decision == selftest.Unknown {
			continue
		}
		if r.Decision == selftest.Allow && l.residualNames(r.Probe) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// residualAllowed counts the results that did not get their expected
// decision but are ALLOW under a residual that names them.
func (l *launch) residualAllowed() int {
	n := 0
	for _, r := range l.st.all() {
		if !r.Passed() && r.Decision == selftest.Allow && l.residualNames(r.Probe) {
			n++
		}
	}
	return n
}

// residualNames reports whether a residual of the plan names probe as one
// it makes report ALLOW.
func (l *launch) residualNames(probe string) bool {
	if l.plan == nil {
		return false
	}
	for _, res := range l.plan.Residuals {
		if slices.Contains(res.Probes, probe) {
			return true
		}
	}
	return false
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
