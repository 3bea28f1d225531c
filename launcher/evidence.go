package launcher

import (
	"errors"
	"fmt"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// checkEvidence refuses an evidence file that the sandbox could write.
func (l *launch) checkEvidence() error {
	if l.ev == nil {
		return nil
	}
	dirs := []string{l.plan.Workspace}
	for _, m := range l.plan.Mounts {
		if !m.ReadOnly && m.Source != "" {
			dirs = append(dirs, m.Source)
		}
	}
	err := l.ev.CheckOutside(dirs)
	if ee := (*ledger.EvidenceError)(nil); errors.As(err, &ee) {
		return &policy.InputError{Field: "--evidence", Msg: ee.Msg, Fix: ee.Fix}
	}
	return err
}

// evidenceProbes writes every probe result to the channel.
func (l *launch) evidenceProbes() {
	if l.ev == nil {
		return
	}
	for _, p := range ledgerProbes(l.st.all()) {
		l.ev.Probe(p)
	}
}

// endEvidence closes the channel, with its last line when finish wrote no
// record: why nothing ran.
func (l *launch) endEvidence(code int, err error) {
	if l.ev == nil {
		return
	}
	if l.runDir == nil && err != nil {
		l.ev.Failed(code, err)
	}
	if err := l.ev.Close(); err != nil {
		fmt.Fprintf(l.out, "agentbox: warning: %v\n", err)
	}
}
