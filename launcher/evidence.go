package launcher

import (
	"errors"
	"fmt"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// checkEvidence refuses an evidence file that the sandbox could write.
func (pl *planned) checkEvidence() error {
	ev := pl.l.ev
	if ev == nil {
		return nil
	}
	dirs := []string{pl.plan.Workspace}
	for _, m := range pl.plan.Mounts {
		if !m.ReadOnly && m.Source != "" {
			dirs = append(dirs, m.Source)
		}
	}
	err := ev.CheckOutside(dirs)
	if ee := (*ledger.EvidenceError)(nil); errors.As(err, &ee) {
		return &policy.InputError{Field: "--evidence", Msg: ee.Msg, Fix: ee.Fix}
	}
	return err
}

// evidenceProbes writes every probe result to the channel.
func (l *launch) evidenceProbes(rs []selftest.Result) {
	if l.ev == nil {
		return
	}
	for _, p := range ledgerProbes(rs) {
		l.ev.Probe(p)
	}
}

// endEvidence closes the channel, with its last line when no record was
// written: why nothing ran.
func (l *launch) endEvidence(recorded bool, code int, err error) {
	if l.ev == nil {
		return
	}
	if !recorded && err != nil {
		l.ev.Failed(code, err)
	}
	if err := l.ev.Close(); err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: %v\n", err)
	}
}
