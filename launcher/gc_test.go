package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/containerd"
	"github.com/agentbox/agentbox/userns"
)

// A stale run whose workspace was deleted since is cleaned completely and
// once: the revoke has nothing to do (and says so in the record), the run
// directory goes, and the next gc finds nothing. It used to be kept as
// residue and reported by every later invocation.
func TestGCCleansRunWhoseWorkspaceIsGone(t *testing.T) {
	d := Dirs{State: t.TempDir(), RunRoot: t.TempDir(), euid: os.Geteuid()}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGrant(ws, 54321, 54321, d.grantLocks())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(); err != nil {
		t.Fatal(err)
	}
	rd, err := engine.CreateRunDir(d.RunRoot, "run-gone")
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.WriteMeta(engine.Meta{RunID: rd.ID, LauncherPid: 1 << 30, Grant: g}); err != nil {
		t.Fatal(err)
	}
	rd.Unlock() // the launcher died
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}

	recs, err := CollectGarbage(context.Background(), d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Teardown == nil || !recs[0].Teardown.Clean() {
		t.Fatalf("gc records %+v, want one clean teardown", recs)
	}
	wg := recs[0].Teardown.WorkspaceGrant
	if wg == nil || wg.Method != "acl" || !strings.Contains(wg.Revoke, "no longer exists: nothing to revoke") {
		t.Errorf("workspace grant record %+v, want method acl and nothing to revoke", wg)
	}
	if !strings.Contains(recs[0].Notes, "nothing to revoke") {
		t.Errorf("notes %q do not say there was nothing to revoke", recs[0].Notes)
	}
	if _, err := os.Stat(rd.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run directory %s kept", rd.Path)
	}
	again, err := CollectGarbage(context.Background(), d, nil)
	if err != nil || len(again) != 0 {
		t.Errorf("second gc: %d record(s), %v; want none", len(again), err)
	}
}

// The launch binary recognises a run on containerd by the file that
// engine records in the bundle, without linking it.
func TestContainerdRecordFileAgrees(t *testing.T) {
	if containerdRecordFile != containerd.RecordFile {
		t.Errorf("launcher looks for %s, engine/containerd records %s", containerdRecordFile, containerd.RecordFile)
	}
}

// gc frees the leases whose run directory is gone, a torn one (a crash of
// the system, leases being unsynced) among them, and keeps the others.
func TestGCReleasesOrphanLeasesTornOrNot(t *testing.T) {
	d := Dirs{State: t.TempDir(), RunRoot: t.TempDir(), euid: os.Geteuid()}
	a := &userns.Allocator{Dir: d.leases(), Host: userns.HostIDs{Passwd: []userns.PasswdEntry{{Name: "root", UID: 0, GID: 0}}}}
	for _, id := range []string{"run-kept", "run-orphan"} {
		if _, err := a.Allocate(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.leases(), "run-torn.lease"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(d.RunRoot, "runs", "run-kept"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := releaseOrphanLeases(d); err != nil {
		t.Fatal(err)
	}
	ids, err := a.LeaseIDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != "run-kept" {
		t.Errorf("leases after gc: %q, want only run-kept's", ids)
	}
}
