package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// evidenceChannel is where a run's evidence goes as JSON lines
// (--evidence FD|FILE), never the streams the agent shares.
type evidenceChannel struct {
	dest string
	ch   *ledger.Evidence
}

func registerEvidenceFlag(fs *pflag.FlagSet, l *launch) {
	fs.StringVar(&l.ev.dest, "evidence", "", "write the evidence (probe results, then the record) as JSON lines to `FD|FILE`: a descriptor of 3 or more that agentbox inherited, or a new file (mode 0600)")
}

// openEvidence opens the --evidence channel before anything runs. For run,
// --json without --evidence is a usage error: the evidence used to go to
// stderr, where the agent can print a forged record before the real one.
func (l *launch) openEvidence(cmd string) (int, bool) {
	if l.json && l.ev.dest == "" && !l.probesOnly {
		fmt.Fprintf(l.io.Err, "agentbox %s: --json needs --evidence FD|FILE: the agent writes to stdout and stderr too, so evidence there could be forged; for example: agentbox run --json --evidence 3 -- CMD 3>evidence.jsonl\n", cmd)
		return exitUsage, false
	}
	if l.ev.dest == "" {
		return exitOK, true
	}
	ch, err := ledger.OpenEvidence(l.ev.dest)
	if err != nil {
		fmt.Fprintf(l.io.Err, "agentbox %s: %v\n", cmd, err)
		return exitUsage, false
	}
	l.ev.ch = ch
	return exitOK, true
}

// checkEvidence refuses an evidence file that the sandbox could write.
func (l *launch) checkEvidence() error {
	if l.ev.ch == nil {
		return nil
	}
	dirs := []string{l.plan.Workspace}
	for _, m := range l.plan.Mounts {
		if !m.ReadOnly && m.Source != "" {
			dirs = append(dirs, m.Source)
		}
	}
	err := l.ev.ch.CheckOutside(dirs)
	if ee := (*ledger.EvidenceError)(nil); errors.As(err, &ee) {
		return &policy.InputError{Field: "--evidence", Msg: ee.Msg, Fix: ee.Fix}
	}
	return err
}

// evidenceProbes writes every probe result to the channel.
func (l *launch) evidenceProbes() {
	if l.ev.ch == nil {
		return
	}
	for _, p := range ledgerProbes(append(append([]selftest.Result{}, l.st.results...), l.st.host...)) {
		l.ev.ch.Probe(p)
	}
}

// endEvidence closes the channel, with its last line when finish wrote no
// record: why nothing ran.
func (l *launch) endEvidence(code int, err error) {
	if l.ev.ch == nil {
		return
	}
	if l.runDir == nil && err != nil {
		l.ev.ch.Failed(code, err)
	}
	if err := l.ev.ch.Close(); err != nil {
		fmt.Fprintf(l.io.Err, "agentbox: warning: %v\n", err)
	}
}
