//go:build linux

package userengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// RecordFile is the run's record in its bundle.
const RecordFile = "user.json"

// Record is what a run of this engine made outside its run directory, so
// that its teardown, or a later gc, can take each part down.
type Record struct {
	// Fence is the run's nftables fence.
	Fence Fence `json:"fence"`
	// Cgroup is the run's cgroup path (/agentbox/RUN).
	Cgroup string `json:"cgroup"`
	// Limits are applied to the cgroup; nil applies none.
	Limits *policy.ResolvedLimits `json:"limits,omitempty"`
	// Home is the run's fresh home of the account, removed at teardown.
	Home string `json:"home"`
	// InitPid is agentbox-init's pid once started.
	InitPid int `json:"init_pid,omitempty"`
}

// Engine runs one sandbox as the account: engine.Engine with no OCI
// runtime. Its Record is filled by the launcher before WriteBundle.
type Engine struct {
	Record Record
	bundle string
	cg     *cgroup
}

var _ engine.Engine = (*Engine)(nil)

// Recorded is the engine of a run whose bundle has a Record, for gc.
func Recorded(bundle string) (*Engine, bool) {
	data, err := os.ReadFile(filepath.Join(bundle, RecordFile))
	if err != nil {
		return nil, false
	}
	e := &Engine{bundle: bundle}
	if err := json.Unmarshal(data, &e.Record); err != nil {
		return nil, false
	}
	return e, true
}

// WriteBundle writes the spec (the record of what runs: init's argv,
// environment and cgroup) and the Record into dir.
func (e *Engine) WriteBundle(dir string, s *specs.Spec, _ policy.Rootfs) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	e.bundle = dir
	if err := engine.WriteConfig(dir, s); err != nil {
		return err
	}
	return e.writeRecord()
}

func (e *Engine) writeRecord() error { return writeRecord(e.bundle, RecordFile, e.Record) }

// Create makes the run's cgroup, loads the fence and starts the spec's
// first process (agentbox-init, as root) cloned into the cgroup, with the
// streams and extra files of o. Init waits for its configuration on fd 3,
// so nothing of the agent runs before the launcher sends it.
func (e *Engine) Create(ctx context.Context, _ string, bundle string, o engine.CreateOptions) (int, error) {
	s, err := readSpec(bundle)
	if err != nil {
		return 0, err
	}
	if e.cg, err = makeCgroup(e.Record.Cgroup, e.Record.Limits); err != nil {
		return 0, err
	}
	if err := e.Record.Fence.Apply(ctx); err != nil {
		return 0, fmt.Errorf("network fence: %w", err)
	}
	pid, err := e.start(s.Process, o)
	if err != nil {
		return 0, err
	}
	e.Record.InitPid = pid
	if err := e.cg.join(pid); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		return pid, err
	}
	return pid, e.writeRecord()
}

// start starts the first process inside the cgroup (CLONE_INTO_CGROUP).
// With o.ConsoleSocket it runs on a fresh pty (pty.go) instead of o.Stdio.
func (e *Engine) start(p *specs.Process, o engine.CreateOptions) (int, error) {
	dir, err := os.Open(e.cg.dir)
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	files := []*os.File{orNull(o.Stdio.In, null), orNull(o.Stdio.Out, null), orNull(o.Stdio.Err, null)}
	sys := &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dir.Fd())}
	var master *os.File
	if o.ConsoleSocket != "" {
		m, slave, err := openPty()
		if err != nil {
			return 0, err
		}
		defer slave.Close()
		defer m.Close() // the launcher receives its own copy
		master, files = m, []*os.File{slave, slave, slave}
		sys.Setsid, sys.Setctty, sys.Ctty = true, true, 0
	}
	files = append(files, o.ExtraFiles...)
	proc, err := os.StartProcess(p.Args[0], p.Args, &os.ProcAttr{Dir: "/", Env: p.Env, Files: files, Sys: sys})
	if err != nil {
		return 0, fmt.Errorf("start %s in cgroup %s: %w", p.Args[0], e.cg.dir, err)
	}
	pid := proc.Pid
	_ = proc.Release() // the launcher, its parent and subreaper, waits for it
	if master != nil {
		if err := sendConsole(o.ConsoleSocket, master); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			return pid, err
		}
	}
	return pid, nil
}

// Start has nothing to do: init runs from Create on and waits for its
// configuration.
func (e *Engine) Start(context.Context, string) error { return nil }

// Kill signals init, or every process of the run's cgroup.
func (e *Engine) Kill(_ context.Context, _ string, sig syscall.Signal, all bool) error {
	if !all {
		if e.Record.InitPid == 0 {
			return engine.ErrNotFound
		}
		return unix.Kill(e.Record.InitPid, sig)
	}
	for _, pid := range procs(e.unifiedDir()) {
		_ = unix.Kill(pid, sig)
	}
	return nil
}

// Delete kills the cgroup's processes with force and removes the cgroup.
func (e *Engine) Delete(_ context.Context, _ string, force bool) error {
	dir := e.unifiedDir()
	if force {
		killCgroup(dir)
	}
	return unix.Rmdir(dir)
}

// State reports the run as running while its cgroup holds a process.
func (e *Engine) State(_ context.Context, id string) (engine.State, error) {
	if len(procs(e.unifiedDir())) == 0 {
		return engine.State{}, engine.ErrNotFound
	}
	return engine.State{ID: id, Pid: e.Record.InitPid, Status: "running", Bundle: e.bundle}, nil
}

// GrantMethod is GrantACL: the account is an ordinary host uid, granted the
// workspace with POSIX ACLs.
func (e *Engine) GrantMethod(context.Context) (method, reason string) {
	return engine.GrantACL, "the agent runs as the host account " + fmt.Sprint(e.Record.Fence.UID) + ", granted the workspace with POSIX ACLs for the run"
}

// ProcRoot is the host's /proc: the agent shares the host's pid namespace.
func (e *Engine) ProcRoot() string { return "/proc" }

func (e *Engine) unifiedDir() string {
	if e.cg != nil {
		return e.cg.dir
	}
	root, err := Unified()
	if err != nil {
		return ""
	}
	return filepath.Join(root, e.Record.Cgroup)
}

// Teardown kills every process of the run's cgroup, checks that no process
// of the account is left anywhere, removes the fence, the run's home, the
// cgroups and, once the cleanups succeeded, the run directory, and says
// what survived.
func (e *Engine) Teardown(ctx context.Context, t engine.Target, cleanups ...func() error) ledger.Teardown {
	var rec ledger.Teardown
	note := func(err error) {
		if err != nil {
			rec.Errors = append(rec.Errors, err.Error())
		}
	}
	dir := e.unifiedDir()
	rec.SurvivingPIDs = e.killAll(ctx, dir, t.InitPid)
	if err := e.Record.Fence.Remove(ctx); err != nil && !errors.Is(err, ErrNoTable) {
		note(err)
	}
	if ok, err := e.Record.Fence.Exists(ctx); ok || err != nil {
		rec.RuntimeStateLeft = append(rec.RuntimeStateLeft, "nftables table inet "+e.Record.Fence.Table)
	}
	note(removeHome(e.Record.Home))
	rec.RuntimeStateLeft = append(rec.RuntimeStateLeft, removeCgroups(dir, e.Record.Cgroup)...)
	failed := false
	for _, c := range cleanups {
		if err := c(); err != nil {
			note(err)
			failed = true
		}
	}
	rec.Decision = ledger.DecisionClean
	if failed {
		rec.Errors = append(rec.Errors, "run directory "+t.RunDir+" kept for a later 'agentbox gc'")
	} else {
		note(engine.RemoveTree(t.RunDir))
		rec.RemainingMounts, rec.OpenSockets = engine.Leftovers(t.RunDir)
	}
	if failed || len(rec.Errors)+len(rec.SurvivingPIDs)+len(rec.RuntimeStateLeft)+len(rec.RemainingMounts)+len(rec.OpenSockets) > 0 {
		rec.Decision = ledger.DecisionResidue
	}
	return rec
}

// killAll kills the cgroup and any process of the account outside it,
// reaps init when it is this process's child, and returns what is still
// alive after a bounded wait.
func (e *Engine) killAll(ctx context.Context, dir string, init int) []int {
	deadline := time.Now().Add(3 * time.Second)
	for {
		killCgroup(dir)
		for _, pid := range accountPids(e.Record.Fence.UID) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		if init > 0 {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(init, &ws, unix.WNOHANG, nil)
		}
		left := slices.Concat(procs(dir), accountPids(e.Record.Fence.UID))
		if len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			slices.Sort(left)
			return slices.Compact(left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// removeCgroups removes the run's cgroup on the unified hierarchy and on
// the v1 ones, and returns those left.
func removeCgroups(unified, path string) []string {
	dirs := []string{unified}
	for _, c := range []string{"memory", "pids", "cpu"} {
		if path != "" {
			dirs = append(dirs, filepath.Join(cgroupRoot, c, path))
		}
	}
	var left []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			left = append(left, "cgroup "+d)
		}
	}
	return left
}
