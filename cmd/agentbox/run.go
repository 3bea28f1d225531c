package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/opencontainers/selinux/go-selinux"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/selftest"
)

func init() {
	register(command{name: "run", summary: "run a command in a verified sandbox around the workspace", run: runRun})
}

func runRun(ctx context.Context, s stdio, args []string) int {
	l := &launch{io: s}
	fs := newFlags(s, "run", "[flags] -- CMD [ARG...]")
	l.flags.register(fs)
	registerEvidenceFlag(fs, l)
	fs.BoolVar(&l.json, "json", false, "machine-readable: no notes on stderr, the evidence only on --evidence (which it needs)")
	fs.BoolVar(&l.rawTerminal, "raw-terminal", false, "pass the agent's output to your terminal unfiltered (clipboard, title and other OSC, DCS, APC sequences included)")
	registerSelfTestFlags(fs, l)
	_, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(cmd) == 0 {
		fmt.Fprintln(s.Err, "agentbox run: no command; give one after --, for example: agentbox run -- sh")
		return exitUsage
	}
	if code, ok := l.openEvidence("run"); !ok {
		return code
	}
	l.argv = cmd
	code, err := l.run(ctx)
	l.endEvidence(code, err)
	return code
}

// run is the whole pipeline for one sandbox. Whatever happens after the run
// directory exists, teardown runs and the ledger gets a record. It returns
// the exit code and the error that ended the run early, if any.
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
		return l.fail(prepared), prepared
	}
	exit, runErr := exitCode(prepared), prepared
	if prepared == nil {
		exit, runErr = l.startAndWait(ctx, sigs)
	}
	l.finish(start, exit, runErr)
	if runErr != nil {
		return l.fail(runErr), runErr
	}
	return exit, nil
}

// prepare runs every step up to a created, not yet started sandbox.
func (l *launch) prepare(ctx context.Context) error {
	return runSteps(ctx, []namedStep{
		{"policy", l.loadPolicy},
		{"env canary", func() error { l.st.canaries.plantEnvCanary(); return nil }},
		{"host", l.captureHost},
		{"gc", l.collectStale},
		{"run directory", l.createRunDir},
		{"gateway", l.startGateway},
		{"ids", func() error { return l.allocateIDs(false) }},
		{"workspace", l.inspectWorkspace},
		{"plan", l.resolvePlan},
		{"evidence", l.checkEvidence},
		{"agent", l.prepareAgent},
		{"render", l.render},
		{"audit", l.auditSpec},
		{"bundle", l.writeBundle},
		{"lsm", l.loadLSM},
		{"workspace grant", l.grantWorkspace},
		{"canaries", l.plantCanaries},
		{"init channel", l.openInit},
		{"create", func() error { return l.create(ctx) }},
		{"configure init", func() error { return l.configureInit(l.probesOnly) }},
	})
}

func (l *launch) startAndWait(ctx context.Context, sigs <-chan os.Signal) (int, error) {
	// A signal before the agent may run aborts the launch: there is nothing
	// to forward it to, and no agent may start after it. Once init has its
	// go, signals wait in sigs for the agent.
	checkCtx, cancel := cancelOnSignal(ctx, sigs)
	err := l.startChecked(checkCtx)
	interrupted := checkCtx.Err() != nil
	cancel()
	var se *stepError
	switch {
	case errors.As(err, &se):
		return se.code, err
	case err != nil:
		return exitHost, err
	case interrupted:
		_ = l.st.init.Abort("interrupted")
		return exitRefused, step("self-test", func() error { return &refusal{"interrupted before the agent started"} })
	}
	if err := step("hand over", func() error { return l.handOver(ctx) }); err != nil {
		errors.As(err, &se)
		return se.code, err
	}
	started := time.Now()
	code, err := l.sess.Wait(ctx, sigs, l.plan.Terminal || !engine.ForegroundOfTerminal())
	trace("agent", started)
	if err != nil {
		return exitHost, step("wait", func() error { return err })
	}
	return code, nil
}

// startChecked starts the sandbox and runs the self-test.
func (l *launch) startChecked(ctx context.Context) error {
	if err := step("start", func() error { return l.sess.Start(ctx) }); err != nil {
		return err
	}
	return step("self-test", func() error { return l.checkBoundary(ctx) })
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
	recs, err := collectGarbage(context.Background(), l.dirs)
	for _, r := range recs {
		fmt.Fprintf(l.io.Err, "agentbox: cleaned stale run %s: %s\n", r.RunID, r.Notes)
	}
	if err != nil {
		fmt.Fprintf(l.io.Err, "agentbox: warning: cleaning stale runs: %v\n", err)
	}
	return nil
}

// finish tears the sandbox down, verifies it, and appends the record.
func (l *launch) finish(start time.Time, exit int, runErr error) {
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
		fmt.Fprintf(l.io.Err, "agentbox: warning: removing canaries: %v\n", err)
	}
	trace("teardown", began)
	if err := l.releaseIDs(); err != nil {
		fmt.Fprintf(l.io.Err, "agentbox: warning: %v\n", err)
	}
	if l.probesOnly && exit == exitOK && td != nil && !td.Clean() {
		exit = exitFindings // a self-test whose sandbox left residue did not pass
	}
	l.rec = l.record(start, exit, runErr, td)
	l.rec.Gateway = gw
	l.rec.Notes = l.terminalNote()
	l.recordWorkspace()
	if td != nil && !td.Clean() {
		fmt.Fprintf(l.io.Err, "agentbox: teardown left residue: %s (run 'agentbox gc')\n", describe(*td))
	}
	if err := l.dirs.ledger().Append(l.rec); err != nil {
		fmt.Fprintf(l.io.Err, "agentbox: warning: ledger: %v\n", err)
	}
	if l.ev.ch != nil {
		l.ev.ch.Record(l.rec)
	}
}

// terminalNote says, for the record and the user, what the terminal filter
// kept from the user's terminal, or that it was off.
func (l *launch) terminalNote() string {
	switch {
	case l.sess == nil || l.probesOnly:
		return ""
	case l.rawTerminal:
		return "terminal filter off (--raw-terminal)"
	}
	d := l.sess.Dropped()
	if d.Total() == 0 {
		return ""
	}
	note := fmt.Sprintf("terminal filter removed %d sequence(s) the agent wrote: %s", d.Total(), d)
	fmt.Fprintf(l.io.Err, "agentbox: %s (agentbox run --raw-terminal lets them through)\n", note)
	return note
}

func (l *launch) record(start time.Time, exit int, runErr error, td *ledger.Teardown) ledger.Record {
	kind := ledger.KindRun
	if l.probesOnly {
		kind = ledger.KindSelftest
	}
	rec := ledger.Record{RunID: l.runID, Kind: kind, Start: start, End: time.Now().UTC(), Command: l.argv, Teardown: td, ExitCode: exit}
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
	rec.Findings = ledgerFindings(l.findings)
	if l.agent.Agent != "" && l.agent.Agent != "generic" {
		rec.Agent = l.agent.Agent
	}
	rec.PermissionMode = l.agent.Permission.Mode
	rec.Probes = ledgerProbes(append(append([]selftest.Result{}, l.st.results...), l.st.host...))
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

// fail prints a step's error for the user and returns its exit code.
func (l *launch) fail(err error) int { return l.failAs("run", err) }

func (l *launch) failAs(cmd string, err error) int {
	fmt.Fprintf(l.io.Err, "agentbox %s: %v\n", cmd, err)
	return exitCode(err)
}

// exitCode is the exit code a failed step maps to (exitHost for an error
// of no step), so that the record's exit code is the process's.
func exitCode(err error) int {
	var se *stepError
	if errors.As(err, &se) {
		return se.code
	}
	return exitHost
}
