//go:build integration && linux

package launcher

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/policy"
)

// gc removes the cgroup directories that crun left below a hybrid host's
// cgroup2 mount in the runs of earlier builds, those of runs that are
// gone, and keeps the one of a run whose directory is still there.
func TestClearHiddenCgroupsAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	if !engine.HybridCgroup() {
		testutil.Skip(t, "this host's cgroups are not hybrid: nothing is ever hidden from crun")
	}
	d := Dirs{State: t.TempDir(), RunRoot: t.TempDir()}
	gone, live := "20261201T000000.000Z-cleargone", "20261201T000000.000Z-clearlive"
	if err := os.MkdirAll(policy.RunDir(d.RunRoot, live), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(dir string) error { // what crun 1.8 leaves for one run
		for _, id := range []string{gone, live} {
			p := filepath.Join(dir, policy.CgroupParent, id)
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(p, "cgroup.procs"), []byte("4242\n"), 0o700); err != nil {
				return err
			}
		}
		return nil
	}
	if err := engine.BelowHybridUnified(write); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = engine.BelowHybridUnified(func(dir string) error {
			_ = os.RemoveAll(filepath.Join(dir, policy.CgroupParent, live))
			_ = os.Remove(filepath.Join(dir, policy.CgroupParent))
			return nil
		})
	})
	// Doctor counts what gc would remove: the run that is gone, not the
	// live one (and earlier builds' real runs, when the host has any).
	if n, why, err := CountHiddenCgroups(d); err != nil || why != "" || n < 1 {
		t.Fatalf("CountHiddenCgroups = %d, %q, %v; want at least the run that is gone", n, why, err)
	}
	note, err := ClearHiddenCgroups(d)
	if err != nil {
		t.Fatal(err)
	}
	// (Earlier builds' real runs on this host may be among those removed.)
	if !strings.Contains(note, "removed the cgroup directories of") {
		t.Errorf("note %q, want the removal said", note)
	}
	var left []string
	if err := engine.BelowHybridUnified(func(dir string) error {
		es, err := os.ReadDir(filepath.Join(dir, policy.CgroupParent))
		for _, e := range es {
			left = append(left, e.Name())
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(left, live) || slices.Contains(left, gone) {
		t.Errorf("left below the cgroup2 mount: %v, want %s kept and %s removed", left, live, gone)
	}
	if n, _, err := CountHiddenCgroups(d); err != nil || n != 0 {
		t.Errorf("after gc, CountHiddenCgroups = %d, %v; want 0 (the live run's is not counted)", n, err)
	}
}
