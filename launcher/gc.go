package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// CollectGarbage cleans every stale run under the run root: run directories
// whose launcher is gone, then id leases whose run directory is gone. Each
// cleaned run gets a gc record in the ledger, and is among the records
// returned. open makes the engine that takes each run down (nil: the OCI
// runtime CLI that meta.json names).
func CollectGarbage(ctx context.Context, d Dirs, open engine.Opener) ([]ledger.Record, error) {
	if open == nil {
		open = engine.OpenRuntime
	}
	stale, err := engine.FindStale(d.RunRoot)
	if err != nil {
		return nil, err
	}
	if err := elsewhere(stale); err != nil {
		return nil, err
	}
	var recs []ledger.Record
	for _, rd := range stale {
		recs = append(recs, cleanStale(ctx, d, open, rd))
	}
	return recs, errors.Join(engine.RemoveAbandoned(d.RunRoot), releaseOrphanLeases(d))
}

func cleanStale(ctx context.Context, d Dirs, open engine.Opener, rd *engine.RunDir) ledger.Record {
	start := time.Now().UTC()
	meta, err := rd.ReadMeta()
	t := cleanRun(ctx, d, open, rd, meta, nil, nil)
	found := fmt.Sprintf("launcher (pid %d) gone; found %s", meta.LauncherPid, describe(t))
	if err != nil {
		found += "; " + err.Error()
	}
	rec := ledger.Record{RunID: rd.ID, Kind: ledger.KindGC, Start: start, End: time.Now().UTC(), Command: meta.Command, Teardown: &t, Notes: found}
	_ = d.Ledger().Append(rec)
	return rec
}

func describe(t ledger.Teardown) string {
	s := fmt.Sprintf("cleanup %q, %d surviving pid(s), %d mount(s), %d socket(s), runtime state %v",
		t.Summary(), len(t.SurvivingPIDs), len(t.RemainingMounts), len(t.OpenSockets), t.RuntimeStateLeft)
	if g := t.WorkspaceGrant; g != nil && g.Revoke != "" {
		s += "; workspace grant: " + ledger.Printable(g.Revoke) // it names the agent's files
	}
	return s
}

// cleanRun takes down whatever the run in rd set up, as meta records it, and
// verifies the result; runtimeDone, when set, is closed once the launcher
// has collected the run's foreground runtime (engine.Target.RuntimeDone),
// and trace, when set, is told each part of it.
func cleanRun(ctx context.Context, d Dirs, open engine.Opener, rd *engine.RunDir, meta engine.Meta, runtimeDone <-chan struct{}, trace func(string, time.Duration)) ledger.Teardown {
	target := engine.Target{ID: rd.ID, RunDir: rd.Path, PidNS: meta.PidNS, InitPid: meta.InitPid, Cgroup: meta.Cgroup, Trace: trace, RuntimePid: meta.RuntimePid, RuntimeStart: meta.RuntimeStart, RuntimeDone: runtimeDone}
	var cleanups []func() error
	var revoked *engine.GrantReport
	if g := meta.Grant; g != nil {
		if g.LockDir == "" {
			g.LockDir = d.grantLocks() // a meta.json from before the lock
		}
		cleanups = append(cleanups, func() error {
			rep, err := g.Revoke()
			revoked = &rep
			return err
		})
	}
	if len(meta.Canaries) > 0 {
		cleanups = append(cleanups, func() error { return (&canaries{files: meta.Canaries}).remove() })
	}
	if meta.Lease != "" {
		cleanups = append(cleanups, func() error { return releaseLease(d, meta.Lease) })
	}
	rec := recordedEngine(rd, open)(meta.Runtime).Teardown(ctx, target, cleanups...)
	if rec.Clean() {
		rd.Unlock()
	}
	rec.WorkspaceGrant = grantRecord(meta.Grant, meta.Granted, revoked)
	return rec
}

// grantRecord is the record of a workspace grant: how it was made, what
// the grant and the revoke did, and every set-id bit taken off.
func grantRecord(g *engine.Grant, granted, revoked *engine.GrantReport) *ledger.WorkspaceGrant {
	if g == nil {
		return nil
	}
	out := &ledger.WorkspaceGrant{Method: g.Method, Reason: g.MethodReason}
	if out.Method == "" {
		out.Method = engine.GrantACL
	}
	if granted != nil {
		out.Grant = granted.Summary()
		for _, s := range granted.Skipped {
			out.Skipped = append(out.Skipped, "grant: "+s)
		}
	}
	if revoked != nil {
		out.Revoke = revoked.Summary()
		out.SetIDCleared = revoked.SetIDCleared
		for _, s := range revoked.Skipped {
			out.Skipped = append(out.Skipped, "revoke: "+s)
		}
	}
	return out
}

func releaseLease(d Dirs, runID string) error {
	a := &userns.Allocator{Dir: d.leases()}
	if err := a.Release(runID); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("release id lease: %w", err)
	}
	return nil
}

// releaseOrphanLeases frees leases whose run directory is gone: a launcher
// always creates its run directory before it leases ids. It goes by the
// lease files' names, so that a lease a crash of the system left torn is
// freed too (userns.Allocator).
func releaseOrphanLeases(d Dirs) error {
	a := &userns.Allocator{Dir: d.leases()}
	ids, err := a.LeaseIDs()
	if err != nil || len(ids) == 0 {
		return nil // no lease directory yet
	}
	var errs []error
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(d.RunRoot, "runs", id)); errors.Is(err, os.ErrNotExist) {
			errs = append(errs, a.Release(id))
		}
	}
	return errors.Join(errs...)
}

// ClearHiddenCgroups removes, as root on a hybrid cgroup host, the
// directories that crun left below the host's cgroup2 mount in the runs
// of earlier agentbox builds (engine.BelowHybridUnified): those of runs
// whose run directory is gone, then their parent once empty. It returns
// what it removed, in words ("" when nothing). A run whose directory is
// still there (an older launcher's, still running) keeps its own.
func ClearHiddenCgroups(d Dirs) (string, error) {
	if why, err := hiddenCgroupsLookable(); why != "" || err != nil {
		return "", nil // nothing can be there, or this user made none
	}
	removed, err := hiddenCgroups(d, true)
	note := ""
	if removed > 0 {
		note = fmt.Sprintf("removed the cgroup directories of %d earlier run(s) that crun had left below %s, on the host's cgroup tmpfs (agentbox builds before 2026-12-02)", removed, engine.HybridUnified)
	}
	if err != nil {
		return note, fmt.Errorf("clear what crun left below %s: %w", engine.HybridUnified, err)
	}
	return note, nil
}

// CountHiddenCgroups is doctor's look at the same directories
// (doctor.LeftoversFunc): how many ClearHiddenCgroups would remove, why
// none can be there, or why it cannot look.
func CountHiddenCgroups(d Dirs) (int, string, error) {
	if why, err := hiddenCgroupsLookable(); why != "" || err != nil {
		return 0, why, err
	}
	n, err := hiddenCgroups(d, false)
	return n, "", err
}

// hiddenCgroupsLookable says why nothing can be below the cgroup2 mount
// (why), or why this launcher cannot look there (err); both empty when
// it can.
func hiddenCgroupsLookable() (why string, err error) {
	switch {
	case !engine.HybridCgroup():
		return "this host's cgroups are not hybrid, so no mount was ever hidden from crun", nil
	case os.Geteuid() != 0:
		return "", errors.New("only root can look below the host's cgroup2 mount (and only root's runs hid it)")
	}
	return "", nil
}

// hiddenCgroups counts, and with remove removes, the directories below
// the cgroup2 mount of runs whose run directory is gone (see
// ClearHiddenCgroups).
func hiddenCgroups(d Dirs, remove bool) (int, error) {
	n := 0
	err := engine.BelowHybridUnified(func(dir string) error {
		// crun made the run's "0::" cgroup where the spec put it
		// (policy.CgroupParent/RUN_ID), below the hidden mount.
		parent := filepath.Join(dir, policy.CgroupParent)
		entries, err := os.ReadDir(parent)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		var errs []error
		for _, e := range entries {
			if _, err := os.Lstat(policy.RunDir(d.RunRoot, e.Name())); err == nil {
				continue
			}
			if remove {
				if err := os.RemoveAll(filepath.Join(parent, e.Name())); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			n++
		}
		if !remove {
			return nil
		}
		if err := os.Remove(parent); err != nil && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
	return n, err
}
