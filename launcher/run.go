package launcher

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/opencontainers/selinux/go-selinux"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
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
	var o outcome
	if cfg.ProbesOnly {
		o = l.selfTest(ctx)
	} else {
		o = l.run(ctx)
	}
	l.endEvidence(o.recorded, o.exit, o.err)
	return o.result(), o.err
}

// ran is what the stages after Prepare handed on: the verified probes, the
// agent's Landlock status once it was handed the sandbox, and the exit code
// with the error that ended the run early, if any.
type ran struct {
	v    verified
	h    handedOver
	exit int
	err  error
	// digests are the record's digests, computed while the agent runs
	// (nil: the record computes them).
	digests *recordDigests
}

// outcome is how a launch ended: the Prepare stage's value (whatever of it
// was reached), what ran after it, and the record, if one was written.
type outcome struct {
	ran
	p        *prepared
	rec      ledger.Record
	recorded bool
}

// result is what the launch hands back to its caller.
func (o outcome) result() Result {
	return Result{
		Record: o.rec, Probes: o.v.all(), Failed: o.v.verdict.Failed,
		ResidualAllowed: o.v.verdict.ResidualAllowed, Plan: o.p.plan, ExitCode: o.exit,
	}
}

// failed is a ran that ended with err.
func failed(err error) ran { return ran{exit: ExitCode(err), err: err} }

// run is the pipeline for one agent.
func (l *launch) run(ctx context.Context) outcome {
	// Signals are handled here from the start, so that Ctrl-C during setup
	// still ends in teardown, and during the run reaches the agent.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	setupCtx, cancel := cancelOnSignal(ctx, sigs)
	start := time.Now().UTC()
	p := &prepared{planned: &planned{l: l}}
	err := p.runRecipe(setupCtx)
	cancel()
	o := outcome{p: p, ran: failed(err)}
	if p.runDir == nil {
		return o
	}
	if err == nil {
		o.ran = l.startAndWait(ctx, p, sigs)
	}
	return l.finish(start, o)
}

// startAndWait is the Start, Verify, HandOver and Wait stages of a run.
func (l *launch) startAndWait(ctx context.Context, p *prepared, sigs <-chan os.Signal) ran {
	// A signal before the agent may run aborts the launch: there is nothing
	// to forward it to, and no agent may start after it. Once init has its
	// go, signals wait in sigs for the agent.
	checkCtx, cancel := cancelOnSignal(ctx, sigs)
	v, err := l.startChecked(checkCtx, p, true)
	interrupted := checkCtx.Err() != nil
	cancel()
	switch {
	case err != nil:
		r := failed(err)
		r.v = v
		return r
	case interrupted:
		_ = p.initCh.Abort("interrupted")
		r := failed(l.step("self-test", func() error { return &refusal{"interrupted before the agent started"} }))
		r.v = v
		return r
	}
	var h handedOver
	if err := l.step("hand over", func() (err error) { h, err = p.handOver(ctx); return err }); err != nil {
		return ran{v: v, exit: ExitCode(err), err: err}
	}
	// While the agent runs, off the record's way, and after the hand-over,
	// whose processes would share the CPUs with it.
	d := digestAhead(p)
	exit, err := l.wait(ctx, p, sigs)
	return ran{v: v, h: h, exit: exit, err: err, digests: d}
}

// startChecked is the Start and Verify stages: the sandbox starts, and its
// probes and the host's checks are judged; with refuse (a run) any failure
// refuses the launch.
func (l *launch) startChecked(ctx context.Context, p *prepared, refuse bool) (verified, error) {
	if err := l.step("start", func() error { return p.sess.Start(ctx) }); err != nil {
		return verified{}, err
	}
	var v verified
	err := l.step("self-test", func() (err error) { v, err = p.verify(ctx, refuse); return err })
	return v, err
}

// wait is the Wait stage: the agent's exit code, with signals forwarded.
// With a foreground runtime, the code is the one init reported, once init
// has exited, while the runtime still deletes the container: teardown
// waits for the runtime beside its own parts that do not depend on it,
// and the check of the report against the runtime's status comes after
// it (finish, settled).
func (l *launch) wait(ctx context.Context, p *prepared, sigs <-chan os.Signal) (int, error) {
	started := time.Now()
	code, err := p.sess.WaitExit(ctx, sigs, p.plan.Terminal || !engine.ForegroundOfTerminal())
	l.trace("agent", started)
	if err != nil {
		err = l.step("wait", func() error { return err })
		return ExitCode(err), err
	}
	return code, nil
}

// settle is r once the exit code the Wait stage returned early (before
// the foreground runtime's exit, see wait) has been checked against the
// runtime's status and log in teardown: an error there ends the run as
// one of the Wait stage would have.
func settle(r ran, s *settled) ran {
	if s == nil {
		return r
	}
	if s.err != nil {
		err := StepError("wait", s.err)
		r.exit, r.err = ExitCode(err), err
		return r
	}
	r.exit = s.code
	return r
}

// settled is what Session.Settle returned, after an early Wait stage.
type settled struct {
	code int
	err  error
}

// selfTest builds the sandbox the current policy describes, runs every
// probe in it with no agent, verifies it from the host, tears it down and
// records it. Its exit code is 0 when every probe passed and teardown was
// clean, ExitFindings otherwise.
func (l *launch) selfTest(ctx context.Context) outcome {
	start := time.Now().UTC()
	p := &prepared{planned: &planned{l: l}}
	err := p.runRecipe(ctx)
	o := outcome{p: p, ran: failed(err)}
	if p.runDir == nil {
		return o
	}
	if err == nil {
		o.ran = l.probeOnly(ctx, p)
	}
	return l.finish(start, o)
}

// probeOnly is the Start, Verify and Wait stages of a self-test: the
// sandbox starts, the probes and the host's verification are collected
// and judged, and init, told to go with no agent, exits.
func (l *launch) probeOnly(ctx context.Context, p *prepared) ran {
	v, err := l.startChecked(ctx, p, false)
	if err == nil {
		if err = p.initCh.Go(); err == nil { // no agent: init exits
			_, err = p.sess.Wait(ctx, nil, false)
		}
	}
	if err != nil {
		r := failed(err)
		r.v = v
		return r
	}
	r := ran{v: v}
	if len(v.verdict.Failed) > 0 {
		r.exit = ExitFindings
	}
	return r
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

// finish is the Teardown and Record stages: it tears the sandbox down,
// verifies it, and appends the record.
func (l *launch) finish(start time.Time, o outcome) outcome {
	td := l.tearDown(o.p)
	o.ran = settle(o.ran, td.settled)
	if l.cfg.ProbesOnly && o.exit == ExitOK && !td.teardown.Clean() {
		o.exit = ExitFindings // a self-test whose sandbox left residue did not pass
	}
	began := time.Now()
	o.rec, o.recorded = l.record(start, o, td), true
	l.trace("finish/record", began)
	if !td.teardown.Clean() {
		fmt.Fprintf(l.out, "agentbox: teardown left residue: %s (run 'agentbox gc')\n", describe(td.teardown))
	}
	began = time.Now()
	if err := o.p.dirs.Ledger().Append(o.rec); err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: ledger: %v\n", err)
	}
	l.trace("finish/ledger", began)
	if l.ev != nil {
		l.ev.Record(o.rec)
	}
	return o
}

// tornDown is the Teardown stage's value: the teardown record, the
// gateway's counts, and the workspace compared with its launch snapshot.
type tornDown struct {
	teardown ledger.Teardown
	gateway  ledger.Gateway
	ws       workspaceAfter
	settled  *settled // the exit code checked, after an early Wait stage
}

// tearDown is the Teardown stage: init's channel, the streams, the gateway,
// the sandbox and everything the run set up outside it, verified gone; then
// the workspace compared with its snapshot.
func (l *launch) tearDown(p *prepared) tornDown {
	began := time.Now()
	sub := l.subTrace("teardown")
	part := func(name string, fn func()) {
		start := time.Now()
		fn()
		if sub != nil {
			sub(name, time.Since(start))
		}
	}
	var td tornDown
	// After an early Wait stage (see wait) the runtime may still be
	// deleting the container: what does not depend on it (init's channel,
	// the gateway, the denial log, and the cleanups of cleanRun) runs
	// meanwhile, and nothing is printed until the session is settled and
	// the agent's output written out.
	pending := p.sess != nil && p.sess.Pending()
	var runtimeDone <-chan struct{}
	if pending {
		runtimeDone = p.sess.RuntimeDone()
	}
	var gwWarning string
	part("close", func() {
		if p.initCh != nil {
			p.initCh.Close()
		}
		p.closeDialer()
		// The agent's output is written out, and the terminal restored,
		// before any line of agentbox's own.
		if p.sess != nil && !pending {
			p.sess.Close()
		}
		td.gateway, gwWarning = stopGateway(p.gw)
		p.denials.stop(p.gw)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	td.teardown = cleanRun(ctx, p.dirs, l.cfg.opener(), p.runDir, p.meta, runtimeDone, sub)
	cancel()
	if pending {
		part("settle", func() {
			code, err := p.sess.Settle()
			td.settled = &settled{code, err}
			p.sess.Close()
		})
	}
	fmt.Fprint(l.out, gwWarning)
	part("workspace", func() { td.ws = l.inspectLeftovers(p.ws) })
	if label := p.host.SELinuxLabels[0]; label != "" {
		selinux.ReleaseLabel(label)
	}
	part("canaries", func() {
		if err := p.canaries.remove(); err != nil {
			fmt.Fprintf(l.out, "agentbox: warning: removing canaries: %v\n", err)
		}
	})
	l.trace("teardown", began)
	p.user.release() // user.go
	began = time.Now()
	if err := p.ids.release(); err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: %v\n", err)
	}
	l.trace("finish/ids release", began)
	return td
}
