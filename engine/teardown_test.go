package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/ledger"
)

// A run whose meta.json names the launcher's own pid namespace (a sandbox
// never shares it) is not killed namespace-wide: teardown refuses it and
// says so, as a residue, instead of killing every process of the host.
func TestTeardownRefusesTheLaunchersOwnNamespace(t *testing.T) {
	own, err := NamespaceInode(os.Getpid(), "pid")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := Runtime{}.Teardown(context.Background(), Target{ID: "r1", RunDir: dir, PidNS: own})
	if rec.Decision != ledger.DecisionResidue || len(rec.SurvivingPIDs) != 0 || !strings.Contains(rec.Summary(), "the launcher's own") {
		t.Errorf("teardown %+v, want a residue naming the launcher's own namespace and no pid of the host", rec)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the run directory was kept; gc would find it again and again")
	}
	if rec := (Runtime{}).Teardown(context.Background(), Target{ID: "r2", RunDir: filepath.Join(t.TempDir(), "gone")}); !rec.Clean() {
		t.Errorf("teardown of a run that never started: %+v, want clean", rec)
	}
}
