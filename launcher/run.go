package launcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/opencontainers/selinux/go-selinux"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/selftest"
)

// Run carries one sandbox through the whole pipeline: Prepare, Start,
// Verify, HandOver, Wait, Teardown, Record (with Config.ProbesOnly, a
// self-test: no HandOver of an agent). Whatever happens after the run
// directory exists, teardown runs and the ledger gets a record. The error
// is what ended the run early, an *Error naming its step; Result.ExitCode
// is the exit code either way.
func Run(ctx context.Context, cfg Config) (Result, error) {
	l, err := newLaunch(cfg)
	if err != nil {
		return Result{ExitCode: ExitCode(err)}, err
	}
	var code int
	if cfg.ProbesOnly {
		code, err = l.selfTest(ctx)
	} else {
		code, err = l.run(ctx)
	}
	l.endEvidence(code, err)
	return l.result(code), err
}

// result is what the launch hands back to its caller.
func (l *launch) result(code int) Result {
	return Result{
		Record: l.rec, Probes: l.st.all(), Failed: l.failedProbes(),
		ResidualAllowed: l.residualAllowed(), Plan: l.plan, ExitCode: code,
	}
}

// run is the pipeline for one agent. It returns the exit code and the
// error that ended the run early, if any.
func (l *launch) run(ctx context.Context) (int, error) {
	// Signals are handled here from the start, so that Ctrl-C during setup
	// still ends in teardown, and during the run reaches the agent.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	setupCtx, cancel := cancelOnSignal(ctx, sigs)
	start := time.Now().UTC()
	prepared := l.prepare(setupCtx)
	cancel()
	if l.runDir == nil {
		return ExitCode(prepared), prepared
	}
	exit, runErr := ExitCode(prepared), prepared
	if prepared == nil {
		exit, runErr = l.startAndWait(ctx, sigs)
	}
	l.finish(start, exit, runErr)
	if runErr != nil {
		return ExitCode(runErr), runErr
	}
	return exit, nil
}

// prepare is the Prepare stage: every step up to a created, not yet
// started sandbox whose init holds its configuration.
func (l *launch) prepare(ctx context.Context) error {
	return l.runSteps(ctx, l.recipe(ctx, false))
}

// recipe is the Prepare stage's steps. Dry (agentbox spec) is the same
// recipe up to the rendered spec with nothing made, leased or started: no
// canary, no gc, no run directory, the gateway's socket where a run's
// would be, the id slot a run would get (the allocator's Peek).
func (l *launch) recipe(ctx context.Context, dry bool) []namedStep {
	planned := []namedStep{
		{"policy", l.loadPolicy},
		{"env canary", func() error { l.st.canaries.plantEnvCanary(); return nil }},
		{"host", l.captureHost},
		{"gc", l.collectStale},
		{"run directory", l.createRunDir},
		{"gateway", l.startGateway},
		{"ids", func() error { return l.allocateIDs(dry) }},
		{"workspace", l.inspectWorkspace},
		{"plan", l.resolvePlan},
		{"evidence", l.checkEvidence},
		{"agent", l.prepareAgent},
		{"render", l.render},
	}
	if dry {
		skip := []string{"env canary", "gc", "run directory"}
		planned = slices.DeleteFunc(planned, func(s namedStep) bool { return slices.Contains(skip, s.name) })
		planned[slices.IndexFunc(planned, func(s namedStep) bool { return s.name == "gateway" })].run = func() error {
			l.host.GatewaySocket = l.specGatewaySocket()
			return nil
		}
		return planned
	}
	return append(planned, []namedStep{
		{"audit", l.auditSpec},
		{"bundle", l.writeBundle},
		{"lsm", l.loadLSM},
		{"workspace grant", l.grantWorkspace},
		{"canaries", l.plantCanaries},
		{"init channel", l.openInit},
		{"create", func() error { return l.create(ctx) }},
		{"configure init", l.configureInit},
	}...)
}

// startAndWait is the Start, Verify, HandOver and Wait stages of a run.
func (l *launch) startAndWait(ctx context.Context, sigs <-chan os.Signal) (int, error) {
	// A signal before the agent may run aborts the launch: there is nothing
	// to forward it to, and no agent may start after it. Once init has its
	// go, signals wait in sigs for the agent.
	checkCtx, cancel := cancelOnSignal(ctx, sigs)
	err := l.startChecked(checkCtx)
	interrupted := checkCtx.Err() != nil
	cancel()
	switch {
	case err != nil:
		return ExitCode(err), err
	case interrupted:
		_ = l.st.init.Abort("interrupted")
		err := l.step("self-test", func() error { return &refusal{"interrupted before the agent started"} })
		return ExitCode(err), err
	}
	if err := l.step("hand over", func() error { return l.handOver(ctx) }); err != nil {
		return ExitCode(err), err
	}
	return l.wait(ctx, sigs)
}

// startChecked is the Start and Verify stages: the sandbox starts, and
// the self-test must pass.
func (l *launch) startChecked(ctx context.Context) error {
	if err := l.step("start", func() error { return l.sess.Start(ctx) }); err != nil {
		return err
	}
	return l.step("self-test", func() error { return l.checkBoundary(ctx) })
}

// wait is the Wait stage: the agent's exit code, with signals forwarded.
func (l *launch) wait(ctx context.Context, sigs <-chan os.Signal) (int, error) {
	started := time.Now()
	code, err := l.sess.Wait(ctx, sigs, l.plan.Terminal || !engine.ForegroundOfTerminal())
	l.trace("agent", started)
	if err != nil {
		err = l.step("wait", func() error { return err })
		return ExitCode(err), err
	}
	return code, nil
}

// cancelOnSignal returns a context that ends when a signal arrives during
// setup; the signal is consumed, since there is no sandbox to forward it to.
func cancelOnSignal(parent context.Context, sigs <-chan os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	stop := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-stop:
		}
	}()
	return ctx, func() { close(stop); cancel() }
}

// collectStale cleans what crashed runs left before this one starts.
func (l *launch) collectStale() error {
	recs, err := CollectGarbage(context.Background(), l.dirs, l.cfg.Engine)
	for _, r := range recs {
		fmt.Fprintf(l.out, "agentbox: cleaned stale run %s: %s\n", r.RunID, r.Notes)
	}
	if err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: cleaning stale runs: %v\n", err)
	}
	return nil
}

// finish is the Teardown and Record stages: it tears the sandbox down,
// verifies it, and appends the record.
func (l *launch) finish(start time.Time, exit int, runErr error) {
	td, gw := l.tearDown()
	if l.cfg.ProbesOnly && exit == ExitOK && td != nil && !td.Clean() {
		exit = ExitFindings // a self-test whose sandbox left residue did not pass
	}
	l.recordRun(start, exit, runErr, td, gw)
}

// tearDown is the Teardown stage: init's channel, the streams, the gateway,
// the sandbox and everything the run set up outside it, verified gone; then
// the workspace compared with its snapshot. It returns the teardown
// record and the gateway's counts.
func (l *launch) tearDown() (*ledger.Teardown, ledger.Gateway) {
	began := time.Now()
	if l.st.init != nil {
		l.st.init.Close()
	}
	// The agent's output is written out, and the terminal restored, before
	// any line of agentbox's own.
	if l.sess != nil {
		l.sess.Close()
	}
	gw := l.stopGateway()
	td := l.teardown()
	l.inspectLeftovers()
	if p := l.host.SELinuxLabels[0]; p != "" {
		selinux.ReleaseLabel(p)
	}
	if err := l.st.canaries.remove(); err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: removing canaries: %v\n", err)
	}
	l.trace("teardown", began)
	if err := l.releaseIDs(); err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: %v\n", err)
	}
	return td, gw
}

// recordRun is the Record stage: the run's record, on the ledger and the
// evidence channel.
func (l *launch) recordRun(start time.Time, exit int, runErr error, td *ledger.Teardown, gw ledger.Gateway) {
	l.rec = l.record(start, exit, runErr, td)
	l.rec.Gateway = gw
	l.rec.Notes = l.terminalNote()
	l.recordWorkspace()
	if td != nil && !td.Clean() {
		fmt.Fprintf(l.out, "agentbox: teardown left residue: %s (run 'agentbox gc')\n", describe(*td))
	}
	if err := l.dirs.Ledger().Append(l.rec); err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: ledger: %v\n", err)
	}
	if l.ev != nil {
		l.ev.Record(l.rec)
	}
}

// terminalNote says, for the record and the user, what the terminal filter
// kept from the user's terminal, or that it was off.
func (l *launch) terminalNote() string {
	switch {
	case l.sess == nil || l.cfg.ProbesOnly:
		return ""
	case l.cfg.RawTerminal:
		return "terminal filter off (--raw-terminal)"
	}
	d := l.sess.Dropped()
	if d.Total() == 0 {
		return ""
	}
	note := fmt.Sprintf("terminal filter removed %d sequence(s) the agent wrote: %s", d.Total(), d)
	fmt.Fprintf(l.out, "agentbox: %s (agentbox run --raw-terminal lets them through)\n", note)
	return note
}

func (l *launch) record(start time.Time, exit int, runErr error, td *ledger.Teardown) ledger.Record {
	kind := ledger.KindRun
	if l.cfg.ProbesOnly {
		kind = ledger.KindSelftest
	}
	rec := ledger.Record{RunID: l.runID, Kind: kind, Start: start, End: time.Now().UTC(), Command: l.argv(), Teardown: td, ExitCode: exit}
	if l.plan != nil {
		for _, r := range l.plan.Residuals {
			rec.Residuals = append(rec.Residuals, ledger.Residual{Code: r.Code, Detail: r.Reason})
		}
		rec.Digests.Policy = digestJSON(l.policy)
	}
	for _, src := range l.sources {
		rec.PolicySources = append(rec.PolicySources, ledger.PolicySource{Path: src.Path, Kind: string(src.Kind), Digest: src.Digest})
	}
	if l.ids.rootless != nil && l.ids.rootless.Reason != "" {
		rec.Residuals = append(rec.Residuals, ledger.Residual{Code: "rootless-single-id", Detail: l.ids.rootless.Reason})
	}
	if l.spec != nil {
		rec.Digests.Spec = digestJSON(l.spec)
		if l.spec.Linux != nil {
			rec.Digests.Seccomp = digestJSON(l.spec.Linux.Seccomp)
		}
	}
	rec.Findings = LedgerFindings(l.findings)
	if l.agent.Agent != "" && l.agent.Agent != "generic" {
		rec.Agent = l.agent.Agent
	}
	rec.PermissionMode = l.agent.Permission.Mode
	rec.Probes = ledgerProbes(l.st.all())
	rec.HostVerification = l.hostVerification()
	for probe, reason := range l.st.allowUnknown {
		rec.Residuals = append(rec.Residuals, ledger.Residual{Code: "probe-unknown-accepted", Detail: probe + ": " + reason})
	}
	if runErr != nil {
		rec.Error = runErr.Error()
	}
	return rec
}

// hostVerification names what the launcher observed from outside.
func (l *launch) hostVerification() map[string]string {
	hv := map[string]string{}
	for _, r := range l.st.host {
		hv[r.Probe] = string(r.Decision) + ": " + r.Observed
	}
	if ll := l.st.landlock; ll != nil {
		hv["landlock"] = fmt.Sprintf("abi %d, fs %v, net %v, scoped %v", ll.ABI, ll.FS, ll.Net, ll.Scoped)
	}
	if len(hv) == 0 {
		return nil
	}
	return hv
}

func digestJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// all is every result: the sandbox's probes, then the host's checks.
func (st *selfTest) all() []selftest.Result {
	return append(append([]selftest.Result{}, st.results...), st.host...)
}
