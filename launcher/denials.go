package launcher

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/agentbox/agentbox/denials"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/seccomp/profiles"
	"github.com/agentbox/agentbox/selftest"
	"github.com/agentbox/agentbox/spec"
)

// DenialSocket is the name of the seccomp listener's socket in the run
// directory (linux.seccomp.listenerPath).
const DenialSocket = "denials.sock"

// denialLog is the run's denial log (docs/denials.md): the seccomp
// listener when this host and runtime can carry the notification fd, the
// reason when they cannot, and what it all recorded once stopped.
type denialLog struct {
	listener *denials.Listener
	off      string // why seccomp denials are not logged; "" when they are
	log      denials.Log
	landlock *denials.LandlockWatch // nil: the run applies no Landlock
	llOff    string                 // why, when landlock is nil
	llLog    denials.Log
	gateway  []ledger.Denial
	gwLayer  *ledger.DenialLayer
	// agentOn is set once the agent has the sandbox: the gateway's
	// refusals from then on are streamed (streamGateway), up to
	// denials.DefaultMax of them, as the record lists them.
	agentOn  atomic.Bool
	streamed atomic.Int64
}

// startDenialLog is the step that turns the audited filter's logged
// denials into notifications for a listener of the launcher's, in the
// bundle's spec (bundleSpec); the self-audit, which runs beside it,
// judges the plain filter of the rendered one: to an outsider a
// notify rule leaves the call to whatever answers, and agentbox's
// listener answers EPERM, which is what the audited filter does (the
// kernel answers ENOSYS once no listener is left). Where the kernel or
// the runtime cannot carry the fd, or the listener cannot listen, the
// plain filter runs and the record says why nothing was logged.
func (p *prepared) startDenialLog() error {
	d := &p.denials
	d.startLandlock(p.plan.Landlock != nil, p.l.evidenceDenial)
	if d.off = p.denialLogUnsupported(); d.off != "" {
		return nil
	}
	prof, _ := profiles.Named(p.plan.Seccomp) // render checked it
	arch, err := profiles.NativeArch()
	if err != nil {
		return err
	}
	l, err := denials.Listen(filepath.Join(p.runDir.Path, DenialSocket), denials.Options{OnDenial: p.l.evidenceDenial})
	if err != nil {
		d.off = err.Error()
		return nil
	}
	d.listener = l
	// The bundle's spec is a copy with a filter of its own; p.spec, which
	// the self-audit reads meanwhile (sideBySide), stays as rendered.
	// Nothing of the copy is written but its Linux.Seccomp.
	s, linux := *p.spec, *p.spec.Linux
	s.Linux = &linux
	if err := spec.WithSeccomp(prof.LoggedOCI(arch, l.Path))(&s); err != nil {
		return err
	}
	p.bundled = &s
	return nil
}

// startLandlock starts reading the kernel's Landlock audit records when
// the run applies a Landlock ruleset; the watch itself says when the host
// cannot give them (no ABI 7, no CAP_AUDIT_READ, auditing off). agentbox
// never turns kernel auditing on: that is the host's choice, system-wide.
func (d *denialLog) startLandlock(applied bool, stream func(ledger.Denial)) {
	if !applied {
		d.llOff = "the run applies no Landlock ruleset (an LSM label or the engine confines the agent)"
		return
	}
	d.landlock = denials.WatchLandlock(denials.LandlockOptions{ABI: selftest.LandlockABI(), OnDenial: stream})
}

// NoListenerEnv is the variable that, set to 1 in the launcher's
// environment, runs the plain filter without the listener; only
// scripts/bench.sh sets it, to measure
// what the listener costs (docs/bench.md). The verdicts are the same; the
// record says that seccomp's refusals were not logged, and why.
const NoListenerEnv = "AGENTBOX_BENCH_NO_LISTENER"

// denialLogUnsupported says why this run cannot log seccomp denials, or "".
func (p *prepared) denialLogUnsupported() string {
	if p.l.cfg.getenv(NoListenerEnv) == "1" {
		return NoListenerEnv + "=1 (a benchmark's baseline) turned the listener off: the plain filter ran"
	}
	if p.plan.Runtime.Path == "" {
		return "the engine runs its own runtime, which agentbox does not hand a listener"
	}
	if p.spec.Linux == nil || p.spec.Linux.Seccomp == nil {
		return "the sandbox has no seccomp filter"
	}
	if err := denials.KernelSupport(); err != nil {
		return err.Error()
	}
	if err := denials.RuntimeSupport(p.plan.Runtime.Name, p.advice.rt.Version); err != nil {
		return err.Error()
	}
	return ""
}

// evidenceDenial streams one of the agent's denials on --evidence.
func (l *launch) evidenceDenial(d ledger.Denial) {
	if l.ev != nil {
		l.ev.Denial(d)
	}
}

// agentStarted marks the end of the self-test's probes: what follows is
// the agent's. pids name the process that will become the agent and the
// sandbox's init, whose Landlock domains are the run's.
func (d *denialLog) agentStarted(pids selftest.SandboxPIDs) {
	d.agentOn.Store(true)
	if d.listener != nil {
		d.listener.AgentStarted()
	}
	if d.landlock != nil {
		d.landlock.AgentStarted(pids.Agent, pids.Init)
	}
}

// stop ends the listener (a call notified after it fails with ENOSYS) and
// reads the gateway's refusals from its decision log while the run
// directory still exists.
func (d *denialLog) stop(gw *netpolicy.RunGateway) {
	if d.listener != nil {
		d.log = d.listener.Stop()
	}
	if d.landlock != nil {
		d.llLog = d.landlock.Stop()
	}
	if gw != nil {
		d.gateway, d.gwLayer = gatewayDenials(gw.Log, d.log.AgentStarted)
	}
}

// record adds the denial log to rec: the agent's denials, seccomp's,
// Landlock's, then the gateway's, and one entry per layer saying whether
// it logged.
func (d *denialLog) record(rec *ledger.Record) {
	if d.listener == nil && d.off == "" {
		return // the run ended before the step
	}
	seccomp := d.log.Layer
	if d.listener == nil {
		seccomp = ledger.DenialLayer{Layer: ledger.LayerSeccomp, Detail: d.off}
	}
	landlock := d.llLog.Layer
	if d.landlock == nil {
		landlock = ledger.DenialLayer{Layer: ledger.LayerLandlock, Detail: d.llOff}
	}
	rec.DenialLayers = append(rec.DenialLayers, seccomp, landlock)
	rec.Denials = append(rec.Denials, d.log.Denials...)
	rec.Denials = append(rec.Denials, d.llLog.Denials...)
	if d.gwLayer != nil {
		rec.DenialLayers = append(rec.DenialLayers, *d.gwLayer)
		rec.Denials = append(rec.Denials, d.gateway...)
	}
}

// gatewayDenials are the deny lines of the gateway's decision log: those
// from the agent's start on are its denials, those before (or all, when
// no agent started) the probes'. A log that cannot be read leaves the
// layer not logged, with the reason.
func gatewayDenials(path string, agentStarted time.Time) ([]ledger.Denial, *ledger.DenialLayer) {
	layer := &ledger.DenialLayer{Layer: ledger.LayerGateway, Logged: true}
	f, err := os.Open(path)
	if err != nil {
		layer.Logged, layer.Detail = false, "the gateway's decision log: "+err.Error()
		return nil, layer
	}
	defer f.Close()
	var out []ledger.Denial
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var dec netpolicy.Decision
		if json.Unmarshal(sc.Bytes(), &dec) != nil || dec.Decision != netpolicy.Deny {
			continue
		}
		n := 1 + int(dec.Repeated)
		switch {
		case agentStarted.IsZero() || dec.Time.Before(agentStarted):
			layer.Probes += n
		case len(out) >= denials.DefaultMax:
			layer.Dropped += n
		default:
			out = append(out, gatewayDenial(dec))
		}
	}
	if err := sc.Err(); err != nil {
		layer.Detail = "the gateway's decision log: " + err.Error()
	}
	return out, layer
}

// streamGateway is the gateway's WithOnDeny: a refusal of the agent's
// (the probes' are counted in the record, not streamed) goes on
// --evidence as it happens, as the seccomp and Landlock ones do.
func (d *denialLog) streamGateway(stream func(ledger.Denial)) func(netpolicy.Decision) {
	return func(dec netpolicy.Decision) {
		if d.agentOn.Load() && d.streamed.Add(1) <= int64(denials.DefaultMax) {
			stream(gatewayDenial(dec))
		}
	}
}

// gatewayDenial is one deny line as a denial: what was asked and why not.
func gatewayDenial(dec netpolicy.Decision) ledger.Denial {
	args := dec.Kind + " " + dec.Target
	if dec.Reason != "" {
		args += ": " + dec.Reason
	}
	if dec.Repeated > 0 {
		args += fmt.Sprintf(" (and %d more like it)", dec.Repeated)
	}
	return ledger.Denial{Time: dec.Time.UTC(), Layer: ledger.LayerGateway, Args: args}
}
