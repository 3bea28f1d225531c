package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/ledger"
)

// Target is what teardown needs to find a run's remains.
type Target struct {
	ID      string
	RunDir  string
	PidNS   uint64 // inode of the sandbox's pid namespace, 0 if unknown
	InitPid int    // the sandbox's first process, reaped here if it is our child
	Cgroup  string // cgroups path given to the runtime, "" if none
	// RuntimePid and RuntimeStart name the runtime process that ran the
	// sandbox in the foreground (see Foreground), 0 if none: it deletes
	// the container's state itself once the sandbox's first process has
	// exited, and teardown waits for it before it looks at that state.
	RuntimePid   int
	RuntimeStart uint64
	// RuntimeDone, when set, is closed once the caller has collected the
	// runtime process RuntimePid (its own child: Session.RuntimeDone):
	// teardown then waits on it, not on /proc, and when the sandbox is
	// empty already it waits beside the cleanups.
	RuntimeDone <-chan struct{}
	// Trace, when set, is told each part of the teardown and how long it
	// took, from the goroutine that called Teardown (the launcher's
	// AGENTBOX_TRACE=1 sub-steps).
	Trace func(part string, took time.Duration)
}

// traced runs fn as part name of the teardown, told to t.Trace.
func (t Target) traced(name string, fn func()) {
	t.trace(name, timed(fn))
}

func (t Target) trace(name string, took time.Duration) {
	if t.Trace != nil {
		t.Trace(name, took)
	}
}

// timed runs fn and returns how long it took.
func timed(fn func()) time.Duration {
	began := time.Now()
	fn()
	return time.Since(began)
}

// Teardown kills every process of the sandbox, deletes the runtime state,
// runs the cleanups (undoing what the run did outside its directory), removes
// the run directory, and then verifies from the host that nothing survives.
// When a cleanup fails, the run directory is kept, so that a later gc finds
// the run again. It is safe to call on a run in any state, including one
// whose container was never created.
func (r Runtime) Teardown(ctx context.Context, t Target, cleanups ...func() error) ledger.Teardown {
	var rec ledger.Teardown
	note := func(err error) {
		if err != nil && !errors.Is(err, ErrNotFound) {
			rec.Errors = append(rec.Errors, err.Error())
		}
	}
	// The launcher kills the sandbox's processes itself first: it may
	// signal them where the runtime, run in a fresh user namespace for a
	// rootless launcher, may not. The runtime then deletes its state.
	ns, refused := sandboxNamespace(t.PidNS)
	note(refused)
	// A sandbox whose init has exited is already empty (the kernel ends a
	// pid namespace's processes before its init's exit completes): then
	// there is nothing to wait for before the runtime's delete, and the
	// walk after it is the proof.
	var found int
	t.traced("kill", func() {
		if found = killNamespace(ns, t.InitPid); found > 0 {
			waitGone(ctx, ns, t.InitPid, 2*time.Second)
		}
	})
	// When the walk found the sandbox's pid namespace empty, no process of
	// it is left to race what follows: the cleanups and the removal of the
	// bundle (most of the run directory's files) then run while the
	// runtime deletes its state, which they do not touch. The bundle goes
	// only once every cleanup succeeded (a failed one keeps the run
	// directory for gc, and an engine's gc may need its bundle), and
	// meta.json, which names the run for gc, stays until the end. With
	// processes found, or no namespace to look in, it is one after the
	// other, as before.
	//
	// A foreground runtime that the caller collects (RuntimeDone) may
	// still be deleting the container when teardown begins (see
	// Session.WaitExit): in the overlap, the cleanups run while it does,
	// and the bundle, where it writes its log, goes once it has exited.
	// One that is not the caller's to collect is waited for first,
	// polling /proc, as is every runtime outside the overlap.
	overlap := ns != 0 && found == 0
	beside := overlap && t.RuntimePid > 0 && t.RuntimeDone != nil
	if t.RuntimePid > 0 && !beside {
		t.traced("runtime", func() { note(t.awaitRuntime(ctx)) })
	}
	type deletion struct {
		err        error
		took       time.Duration
		runtime    error         // waiting for the runtime, when beside
		runtimeFor time.Duration // how long that took
	}
	deleted := make(chan deletion, 1)
	deleteState := func() {
		var d deletion
		if beside {
			d.runtimeFor = timed(func() { d.runtime = t.awaitRuntime(ctx) })
		}
		d.took = timed(func() {
			if r.Path == "" || r.stateGone(t.ID) {
				return
			}
			if err := r.Delete(ctx, t.ID, true); err != nil && !errors.Is(err, ErrNotFound) {
				_ = r.Kill(ctx, t.ID, syscall.SIGKILL, true)
				if err := r.Delete(ctx, t.ID, false); err != nil && !errors.Is(err, ErrNotFound) {
					d.err = err
				}
			}
		})
		deleted <- d
	}
	joinDelete := func() {
		d := <-deleted
		if beside {
			note(d.runtime)
			t.trace("runtime", d.runtimeFor)
		}
		note(d.err)
		t.trace("delete", d.took)
	}
	failed := false
	runCleanups := func() {
		t.traced("cleanups", func() {
			for _, c := range cleanups {
				if err := c(); err != nil {
					note(err)
					failed = true
				}
			}
		})
	}
	var cgroups []string
	if overlap {
		go deleteState()
		runCleanups()
		// A foreground runtime still exiting (beside) writes in the bundle
		// only its log, which it gives up once collected (Foreground's
		// collected reads it then): everything else goes meanwhile, the
		// log and the directory once it has exited.
		keep := ""
		if beside {
			keep = runtimeLogName
		}
		if !failed {
			t.traced("bundle", func() { note(removeBundle(t.RunDir, keep)) })
		}
		joinDelete()
		if beside && !failed {
			t.traced("bundle log", func() { note(removeBundle(t.RunDir, "")) })
		}
		t.traced("walk", func() { rec.SurvivingPIDs = waitGone(ctx, ns, t.InitPid, time.Second) })
		t.traced("cgroups", func() { cgroups = removeCgroups(t.Cgroup) })
	} else {
		deleteState()
		joinDelete()
		t.traced("walk", func() { rec.SurvivingPIDs = waitGone(ctx, ns, t.InitPid, time.Second) })
		t.traced("cgroups", func() { cgroups = removeCgroups(t.Cgroup) })
		runCleanups()
	}
	if failed {
		rec.Decision = ledger.DecisionResidue
		rec.RuntimeStateLeft = append(r.stateLeft(ctx, t.ID), cgroups...)
		rec.Errors = append(rec.Errors, "run directory "+t.RunDir+" kept for a later 'agentbox gc'")
		return rec
	}
	t.traced("run directory", func() { note(removeRunDir(t.RunDir)) })
	t.traced("proof", func() {
		rec.RuntimeStateLeft = append(r.stateLeft(ctx, t.ID), cgroups...)
		if t.RuntimePid > 0 && !runtimeGone(t.RuntimePid, t.RuntimeStart) {
			rec.RuntimeStateLeft = append(rec.RuntimeStateLeft, fmt.Sprintf("%s process %d still running", r.Name, t.RuntimePid))
		}
		rec.RemainingMounts = mountsUnder(t.RunDir)
		rec.OpenSockets = socketsUnder(t.RunDir)
	})
	rec.Decision = ledger.DecisionClean
	if len(rec.SurvivingPIDs)+len(rec.RemainingMounts)+len(rec.OpenSockets)+len(rec.RuntimeStateLeft) > 0 || refused != nil {
		rec.Decision = ledger.DecisionResidue
	}
	return rec
}

// sandboxNamespace is ns, the sandbox's pid namespace, unless it is the
// launcher's own, which a sandbox never shares: a meta.json that named it
// would have teardown kill everything the host runs. That one is refused
// (0, and an error that makes the teardown a residue).
func sandboxNamespace(ns uint64) (uint64, error) {
	if ns == 0 {
		return 0, nil
	}
	own, err := NamespaceInode(os.Getpid(), "pid")
	if err != nil {
		return 0, fmt.Errorf("the launcher's own pid namespace is unreadable, so pid namespace %d was not killed: %w", ns, err)
	}
	if own == ns {
		return 0, fmt.Errorf("pid namespace %d is the launcher's own: no process of it was killed, and none of the sandbox's verified gone", ns)
	}
	return ns, nil
}

// killNamespace sends SIGKILL to every process of the sandbox (SandboxPids)
// and returns how many it found.
func killNamespace(ns uint64, init int) int {
	pids := SandboxPids(ns, init)
	for _, pid := range pids {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	return len(pids)
}

// waitGone polls until no process is in pid namespace ns, or timeout, and
// returns the survivors. It reaps init (a zombie stays in the namespace
// until its parent, this launcher when it is the subreaper, collects it).
// The polls start 1 ms apart and back off to 10 ms: killed processes are
// usually gone within a millisecond or two.
func waitGone(ctx context.Context, ns uint64, init int, timeout time.Duration) []int {
	if ns == 0 {
		return nil
	}
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		if init > 0 {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(init, &ws, unix.WNOHANG, nil)
		}
		pids := SandboxPids(ns, init)
		if len(pids) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return pids
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// SandboxPids lists the live processes of a sandbox's pid namespace ns
// whose first process is init: none once init has exited. The kernel ends
// every other process of a pid namespace before its init's exit completes;
// when the last is reaped it frees the namespace's inode number, and gives
// it to the next pid namespace made anywhere on the host (the lowest free
// number, at once): from then on ns names someone else's namespace, whose
// processes are not this sandbox's to kill or to count. The list is taken
// before init is checked, so that a live init held the namespace, and its
// number, for the whole walk. init 0 (not known) trusts ns alone.
//
// An init that has exited before the walk makes the walk's answer none
// whatever it finds, so it is not walked: after a run whose agent exited,
// that is every teardown's kill and walk (2–4 ms of /proc each here).
func SandboxPids(ns uint64, init int) []int {
	if ns == 0 || init > 0 && !holdsNamespace(init, ns) {
		return nil
	}
	pids := PidsInNamespace(ns)
	if init > 0 && !holdsNamespace(init, ns) {
		return nil
	}
	return pids
}

// holdsNamespace reports whether init is a live process of pid namespace
// ns (not a zombie).
func holdsNamespace(init int, ns uint64) bool {
	ino, err := NamespaceInode(init, "pid")
	return err == nil && ino == ns && !zombie(init)
}

// PidsInNamespace lists the host pids of processes in the pid namespace
// with inode ns. A zombie is not among them: it has exited and holds
// nothing but its pid until whoever adopted it reaps it (after a killed
// launcher that may be a subreaper that never does).
func PidsInNamespace(ns uint64) []int {
	return LivePids(func(pid int) bool {
		ino, err := NamespaceInode(pid, "pid")
		return err == nil && ino == ns
	})
}

// LivePids lists the host pids, zombies left out, for which keep is true:
// the one walk of /proc of every engine's teardown proof.
func LivePids(keep func(pid int) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if keep(pid) && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// zombie reports whether pid has exited and awaits its reaping: state Z
// (or X) in /proc/pid/stat, read after the command name's closing paren.
func zombie(pid int) bool {
	f, err := readStat(pid)
	return err == nil && (f[0][0] == 'Z' || f[0][0] == 'X')
}

// NamespaceInode returns the inode of /proc/pid/ns/kind.
func NamespaceInode(pid int, kind string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/%d/ns/%s", pid, kind), &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// removeCgroups removes the run's (empty) cgroup directories that the
// runtime left, and returns those that could not be removed.
func removeCgroups(path string) []string {
	if path == "" {
		return nil
	}
	var left []string
	for _, dir := range cgroupDirs(path) {
		if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
			left = append(left, dir)
		}
	}
	return left
}

// cgroupDirs lists where path lives: the unified hierarchy and each v1
// controller mounted under /sys/fs/cgroup.
func cgroupDirs(path string) []string {
	base := cgroupRoot
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(base, "cgroup.controllers")); err == nil {
		return []string{filepath.Join(base, path)}
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(base, e.Name(), path))
		}
	}
	return out
}

// removeBundle removes the bundle directory of the run directory dir,
// after unmounting its root's tmpfs (Runtime.RootTmpfs).
func removeBundle(dir, keep string) error {
	if dir == "" {
		return nil
	}
	bundle := filepath.Join(dir, "bundle")
	if err := unmountUnder(bundle); err != nil {
		return fmt.Errorf("remove the bundle: %w", err)
	}
	if keep == "" {
		if err := RemoveTree(bundle); err != nil {
			return fmt.Errorf("remove the bundle: %w", err)
		}
		return nil
	}
	entries, err := os.ReadDir(bundle)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the bundle: %w", err)
	}
	for _, e := range entries {
		if e.Name() == keep {
			continue
		}
		if err := RemoveTree(filepath.Join(bundle, e.Name())); err != nil {
			return fmt.Errorf("remove the bundle: %w", err)
		}
	}
	return nil
}

func removeRunDir(dir string) error {
	if dir == "" {
		return nil
	}
	// A bundle removed already (removeBundle) has nothing mounted below
	// it: a mount point cannot be removed.
	if bundle := filepath.Join(dir, "bundle"); !notExist(bundle) {
		if err := unmountUnder(bundle); err != nil {
			return fmt.Errorf("remove run directory: %w", err)
		}
	}
	if err := RemoveTree(dir); err != nil {
		return fmt.Errorf("remove run directory: %w", err)
	}
	return nil
}

// notExist reports whether nothing is at path (a link is something).
func notExist(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// awaitRuntime waits for the foreground runtime process named pid and
// start to exit, which it does by itself once the sandbox's first process
// has exited (after a SIGKILLed launcher, its parent-death signal ended it
// already). One that is still there after a grace is killed, and said.
func awaitRuntime(ctx context.Context, pid int, start uint64) error {
	deadline := time.Now().Add(runtimeGrace)
	pause := time.Millisecond
	for !runtimeGone(pid, start) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			killRuntime(pid, start)
			return outlived(pid)
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
	return nil
}

// runtimeGrace is how long a foreground runtime may take, after teardown
// began, to exit by itself.
const runtimeGrace = 5 * time.Second

func outlived(pid int) error {
	return fmt.Errorf("the runtime's process %d outlived the sandbox's first process and was killed", pid)
}

// awaitRuntime waits for the target's foreground runtime: on RuntimeDone
// when the caller collects it, with the grace and the kill of the
// package's awaitRuntime, which polls /proc otherwise.
func (t Target) awaitRuntime(ctx context.Context) error {
	if t.RuntimeDone == nil {
		return awaitRuntime(ctx, t.RuntimePid, t.RuntimeStart)
	}
	grace := time.NewTimer(runtimeGrace)
	defer grace.Stop()
	select {
	case <-t.RuntimeDone:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	killRuntime(t.RuntimePid, t.RuntimeStart)
	select { // collected once its SIGKILL ended it
	case <-t.RuntimeDone:
	case <-time.After(time.Second):
	}
	return outlived(t.RuntimePid)
}

// stateGone reports that the runtime keeps no state of sandbox id, so that
// deleting it would prove nothing: runc and crun keep a container's in
// ROOT/ID (see stateLeft), which a foreground run removes itself. runsc's
// is asked for as before.
func (r Runtime) stateGone(id string) bool {
	if r.Name == "runsc" || r.Root == "" || id == "" {
		return false
	}
	return notExist(filepath.Join(r.Root, id))
}

// stateLeft says what the runtime still holds of sandbox id, nil for
// nothing. runc, crun and runsc keep a container's state in ROOT/ID, so
// its absence settles it without another runtime call; when it is there,
// the runtime says why.
func (r Runtime) stateLeft(ctx context.Context, id string) []string {
	dir := filepath.Join(r.Root, id)
	if r.Path == "" || r.Root == "" {
		return nil
	}
	if r.Name == "runsc" {
		return r.runscStateLeft(ctx, id)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := r.State(ctx, id); err == nil {
		return []string{"container still known to " + r.Name}
	}
	return []string{"state directory " + dir + " left"}
}

// socketsUnder lists bound unix sockets whose path is under dir.
func socketsUnder(dir string) []string {
	return scanLines("/proc/net/unix", func(f []string) string {
		if len(f) > 7 && within(f[7], dir) {
			return f[7]
		}
		return ""
	})
}

func within(p, dir string) bool {
	return dir != "" && (p == dir || strings.HasPrefix(p, dir+"/"))
}

func scanLines(path string, pick func([]string) string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := pick(strings.Fields(sc.Text())); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Leftovers are what a removed run directory still has on the host: the
// mounts and the open unix sockets below it (an engine's teardown record).
func Leftovers(dir string) (mounts, sockets []string) {
	return mountsUnder(dir), socketsUnder(dir)
}
