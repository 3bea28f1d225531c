package audit_test

import (
	"testing"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/selftest"
)

// TestProbesExist keeps the catalog's proofs honest: every probe a finding
// names is in the self-test catalog.
func TestProbesExist(t *testing.T) {
	known := map[string]bool{}
	for _, p := range selftest.Catalog() {
		known[p.Name] = true
	}
	for _, r := range audit.Catalog() {
		if r.Probe != "" && !known[r.Probe] {
			t.Errorf("%s names probe %q, which the self-test catalog does not have", r.Code, r.Probe)
		}
	}
}
