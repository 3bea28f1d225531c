package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/agentbox/agentbox/doctor"
	"github.com/agentbox/agentbox/selftest"
)

func init() {
	register(command{name: "selftest", summary: "build a throwaway sandbox with the current policy, run every probe, print the verdicts", run: runSelfTest})
	doctorSelfTest = doctorProof
}

func runSelfTest(ctx context.Context, s stdio, args []string) int {
	l := &launch{io: s, probesOnly: true}
	fs := newFlags(s, "selftest", "[flags]")
	l.flags.register(fs)
	registerSelfTestFlags(fs, l)
	fs.BoolVar(&l.json, "json", false, "print one JSON line per probe, then the verdict, on stdout")
	registerEvidenceFlag(fs, l)
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos)+len(cmd) > 0 {
		fs.Usage()
		return exitUsage
	}
	if code, ok := l.openEvidence("selftest"); !ok {
		return code
	}
	code, err := l.selfTest(ctx)
	if err != nil {
		code = l.failAs("selftest", err)
	} else {
		l.printVerdict()
	}
	l.endEvidence(code, err)
	return code
}

// selfTest builds the sandbox the current policy describes, runs every
// probe in it with no agent, verifies it from the host, tears it down and
// records it. It returns 0 when every probe passed and teardown was clean.
func (l *launch) selfTest(ctx context.Context) (int, error) {
	l.argv = []string{"true"} // never started: probes only
	start := time.Now().UTC()
	err := l.prepare(ctx)
	if l.runDir == nil {
		return exitHost, err
	}
	if err == nil {
		err = l.probeOnly(ctx)
	}
	code := exitOK
	if len(l.failedProbes()) > 0 {
		code = exitFindings
	}
	l.finish(start, code, err)
	if err != nil {
		return exitHost, err
	}
	return l.rec.ExitCode, nil // finish also counts a teardown residue
}

// probeOnly starts the sandbox, collects the probes and the host's
// verification, and waits for init, which exits after the probes.
func (l *launch) probeOnly(ctx context.Context) error {
	if err := step("start", func() error { return l.sess.Start(ctx) }); err != nil {
		return err
	}
	if err := step("self-test", func() error { return l.collectProbes(ctx) }); err != nil {
		return err
	}
	if err := l.st.init.Go(); err != nil { // no agent: init exits
		return err
	}
	_, err := l.sess.Wait(ctx, nil, false)
	return err
}

// printVerdict prints the table (or JSON lines) and the verdict.
func (l *launch) printVerdict() {
	all := append(append([]selftest.Result{}, l.st.results...), l.st.host...)
	failed := l.failedProbes()
	verdict := "PASS"
	if len(failed) > 0 || (l.rec.Teardown != nil && !l.rec.Teardown.Clean()) {
		verdict = "FAIL"
	}
	if l.json {
		for _, r := range all {
			fmt.Fprintln(l.io.Out, probeLine(r))
		}
		_ = json.NewEncoder(l.io.Out).Encode(map[string]any{"verdict": verdict, "run_id": l.runID, "probes": len(all), "failed": len(failed), "teardown": l.rec.Teardown})
		return
	}
	tw := tabwriter.NewWriter(l.io.Out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tEXPECT\tDECISION\tOBSERVED")
	for _, r := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Probe, r.Expect, r.Decision, r.Observed)
	}
	tw.Flush()
	td := "not run"
	if l.rec.Teardown != nil {
		td = l.rec.Teardown.Cleanup
	}
	residual := ""
	if n := l.residualAllowed(); n > 0 {
		residual = fmt.Sprintf(" (%d of them ALLOW under a recorded residual)", n)
	}
	fmt.Fprintf(l.io.Out, "\n%s: %d of %d probes passed%s; teardown %s; run %s\n", verdict, len(all)-len(failed), len(all), residual, td, l.runID)
}

// doctorProof is doctor's end-to-end proof: the self-test of a sandbox
// around a fresh, empty workspace, printing nothing.
func doctorProof(ctx context.Context) (doctor.SelfTestResult, error) {
	ws, err := os.MkdirTemp("", "agentbox-doctor-")
	if err != nil {
		return doctor.SelfTestResult{}, err
	}
	defer os.RemoveAll(ws)
	quiet := stdio{In: nil, Out: io.Discard, Err: io.Discard, Getenv: os.Getenv}
	l := &launch{io: quiet, probesOnly: true}
	l.flags.workspace = ws
	_, err = l.selfTest(ctx)
	res := doctor.SelfTestResult{RunID: l.runID, Probes: l.rec.Probes}
	if err == nil && l.rec.Teardown != nil && !l.rec.Teardown.Clean() {
		err = errors.New("teardown left residue: " + l.rec.Teardown.Cleanup)
	}
	return res, err
}
