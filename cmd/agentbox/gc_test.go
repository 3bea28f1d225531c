package main

import (
	"testing"

	"github.com/agentbox/agentbox/ledger"
)

// The summary counts the runs cleaned and those a later gc must retry.
func TestGCSummary(t *testing.T) {
	clean, residue := ledger.Record{Teardown: &ledger.Teardown{Decision: ledger.DecisionClean}}, ledger.Record{Teardown: &ledger.Teardown{Decision: ledger.DecisionResidue}}
	for _, tc := range []struct {
		recs []ledger.Record
		want string
	}{
		{nil, "0 stale run(s) cleaned."},
		{[]ledger.Record{clean}, "1 stale run(s) cleaned."},
		{[]ledger.Record{clean, residue}, "1 stale run(s) cleaned, 1 left for a later 'agentbox gc' (see above)."},
	} {
		if got := gcSummary(tc.recs); got != tc.want {
			t.Errorf("gcSummary(%d records) = %q, want %q", len(tc.recs), got, tc.want)
		}
	}
}
