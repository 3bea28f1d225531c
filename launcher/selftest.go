package launcher

import (
	"context"
	"time"
)

// selfTest builds the sandbox the current policy describes, runs every
// probe in it with no agent, verifies it from the host, tears it down and
// records it. It returns 0 when every probe passed and teardown was clean,
// ExitFindings otherwise.
func (l *launch) selfTest(ctx context.Context) (int, error) {
	start := time.Now().UTC()
	err := l.prepare(ctx)
	if l.runDir == nil {
		return ExitCode(err), err
	}
	if err == nil {
		err = l.probeOnly(ctx)
	}
	code := ExitOK
	if len(l.failedProbes()) > 0 {
		code = ExitFindings
	}
	l.finish(start, code, err)
	if err != nil {
		return ExitCode(err), err
	}
	return l.rec.ExitCode, nil // finish also counts a teardown residue
}

// probeOnly is the Start, Verify and Wait stages of a self-test: the
// sandbox starts, the probes and the host's verification are collected,
// and init, told to go with no agent, exits.
func (l *launch) probeOnly(ctx context.Context) error {
	if err := l.step("start", func() error { return l.sess.Start(ctx) }); err != nil {
		return err
	}
	if err := l.step("self-test", func() error { return l.collectProbes(ctx) }); err != nil {
		return err
	}
	if err := l.st.init.Go(); err != nil { // no agent: init exits
		return err
	}
	_, err := l.sess.Wait(ctx, nil, false)
	return err
}
