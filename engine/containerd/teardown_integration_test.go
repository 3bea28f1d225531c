//go:build integration

package containerd

import (
	"context"
	"os"
	"strings"
	"testing"

	containerd "github.com/containerd/containerd/v2/client"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/containerd/ctrversion"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
)

func testAddress(t *testing.T) string {
	t.Helper()
	testutil.RequireRoot(t)
	addr := os.Getenv("AGENTBOX_TEST_CONTAINERD")
	if addr == "" {
		addr = "/run/agentbox-containerd/containerd.sock"
	}
	if _, err := os.Stat(addr); err != nil {
		testutil.Skip(t, "no containerd at "+addr+" (run scripts/containerd-up.sh)")
	}
	return addr
}

// The proof is not a formality: a container of the run's id that the
// daemon still holds is named, and makes the teardown a residue; once it
// is gone, the same proof finds nothing.
func TestProofNamesWhatTheDaemonStillHolds(t *testing.T) {
	addr := testAddress(t)
	e := Opener(addr)(engine.Runtime{Name: "runc", Path: "/usr/sbin/runc", Root: t.TempDir()}).(*Engine)
	c, ctx, err := e.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id := "proof-" + strings.ReplaceAll(t.Name(), "/", "-")
	s := &specs.Spec{Version: specs.Version, Root: &specs.Root{Path: "/nonexistent"}, Process: &specs.Process{Args: []string{"true"}, Cwd: "/"}}
	ctr, err := c.NewContainer(ctx, id, containerd.WithSpec(s), containerd.WithRuntime(shimRuntimeType, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctr.Delete(ctx) })

	left, unknown := e.proveGone(ctx, id, shimProc{}, tracer{})
	if len(unknown) > 0 || len(left) != 1 || !strings.Contains(left[0], "containerd container agentbox/"+id+" still exists") {
		t.Errorf("proof with the container there: left %q, unknown %q; want the container named", left, unknown)
	}

	// Teardown itself takes it down (the bundle's record says the daemon
	// was asked for it) and then proves it gone.
	run := t.TempDir()
	if err := os.Mkdir(run+"/bundle", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(run+"/bundle", Record{Address: addr, Namespace: Namespace, Container: true}); err != nil {
		t.Fatal(err)
	}
	rec := e.Teardown(context.Background(), engine.Target{ID: id, RunDir: run})
	if rec.Decision != ledger.DecisionClean {
		t.Errorf("teardown %+v, want clean", rec)
	}
	if _, err := c.LoadContainer(ctx, id); err == nil {
		t.Error("the container survived teardown")
	}
}

// A daemon older than MinVersion is refused with what is missing; the
// private one of the tests is new enough.
func TestDaemonVersionIsGated(t *testing.T) {
	addr := testAddress(t)
	e := Opener(addr)(engine.Runtime{Name: "runc"}).(*Engine)
	c, ctx, err := e.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.closeClient()
	v, err := c.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrversion.Gate(v.Version); err != nil {
		t.Errorf("the test daemon %s is refused: %v", v.Version, err)
	}
}
