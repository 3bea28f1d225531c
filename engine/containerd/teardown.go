package containerd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tasks "github.com/containerd/containerd/api/services/tasks/v1"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/defaults"
	"github.com/containerd/errdefs"
	"github.com/containerd/errdefs/pkg/errgrpc"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
)

// shimGone bounds how long teardown waits for the shim to exit once its
// task is deleted (containerd shuts it down right after).
const shimGone = 3 * time.Second

// Teardown deletes the task and the container on the daemon, then takes
// down what the runtime CLI's teardown takes down (the processes of the
// sandbox's pid namespace, the runtime's state, the cgroups, the run
// directory, after the cleanups), and proves from the daemon and from the
// host that the task, the container, the shim, its bundle directory, the
// runtime's state (shimRuntime) and any snapshot of the run's id are gone.
// What is left is named in
// RuntimeStateLeft and makes the record a residue. When the daemon cannot
// delete them, the run directory is kept for a later gc.
func (e *Engine) Teardown(ctx context.Context, t engine.Target, cleanups ...func() error) ledger.Teardown {
	defer e.closeClient()
	if r := findRun(e.Address, t.ID, false); r != nil {
		e.borrow(r.client)
	}
	tr := tracer{step: "teardown", sink: t.Trace}
	rec, _, err := ReadRecord(filepath.Join(t.RunDir, "bundle"))
	onDaemon := rec.Container || err != nil
	var shim shimProc
	tr.part("shim find", func() { shim = e.shimOf(t, rec) })
	all := cleanups
	if onDaemon || shim.pid > 0 {
		if rest := e.takeDown(ctx, t.ID, tr); rest != nil {
			all = append([]func() error{rest}, cleanups...)
		}
	}
	cli, state := e.shimRuntime(t.ID)
	td := cli.Teardown(ctx, t, all...)
	if state != "" && cli.Path == "" && exists(state) {
		td.RuntimeStateLeft = append(td.RuntimeStateLeft, "state directory "+state+" left")
		td.Decision = ledger.DecisionResidue
	}
	if !onDaemon && shim.pid == 0 {
		return td // the daemon was never asked for anything of the run
	}
	left, unknown := e.proveGone(ctx, t.ID, shim, tr)
	td.RuntimeStateLeft = append(td.RuntimeStateLeft, left...)
	td.Errors = append(td.Errors, unknown...)
	if len(left)+len(unknown) > 0 {
		td.Decision = ledger.DecisionResidue
	}
	return td
}

// shimRuntime is the runtime as the CLI's teardown is to see it, and the
// directory of the run's runtime state. The runc shim keeps that state
// below a directory of the namespace's own (ROOT/agentbox/ID, where the
// CLI keeps ROOT/ID), so that is the root the teardown deletes in and
// proves empty. Once the shim has deleted the state with the task, as it
// does, the runtime's delete would find nothing: it is not run (the Path
// left empty), and the state's absence, checked after the teardown, is the
// proof.
func (e *Engine) shimRuntime(id string) (engine.Runtime, string) {
	cli := e.Runtime
	cli.UserNS = nil // refused at create; a stale meta.json must not bring one back
	if cli.Root == "" {
		return cli, ""
	}
	cli.Root = filepath.Join(cli.Root, Namespace)
	state := filepath.Join(cli.Root, id)
	if !exists(state) {
		cli.Path = ""
	}
	return cli, state
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// shimOf is the run's shim: the one running now (the one the bundle
// recorded at create when that still runs, else any the walk of /proc
// finds), else the recorded one.
func (e *Engine) shimOf(t engine.Target, r Record) shimProc {
	recorded := shimProc{pid: r.ShimPid, bundle: r.ShimBundle}
	if recorded.pid > 0 && isShim(recorded.pid, e.Address, t.ID) {
		return recorded
	}
	if s := findShim(e.Address, t.ID); s.pid > 0 {
		return s
	}
	return recorded
}

// takeDown kills and deletes the task, then deletes the container; what
// it returns is the rest, a cleanup for the CLI's teardown (its error, or
// the container's delete still under way; nil for nothing). A task whose
// exit this process saw (Wait, by the engine that created it) is deleted
// as it is: its processes are gone, and the kill of a forced delete would
// only run the runtime's kill --all on a stopped container.
func (e *Engine) takeDown(ctx context.Context, id string, tr tracer) (rest func() error) {
	r := findRun(e.Address, id, true)
	exited := r != nil && r.hasExited()
	if r != nil {
		defer r.io.close()
	}
	var c *containerd.Client
	var err error
	tr.part("dial", func() { c, ctx, err = e.connect(ctx) })
	if err != nil {
		return failed(err)
	}
	if exited {
		tr.part("task delete", func() { err = deleteExited(ctx, c, id) })
		if err == nil {
			return deleteContainer(ctx, c, id, tr)
		}
		// Not deletable as it is after all: forced, as any other.
	}
	var ctr containerd.Container
	tr.part("container load", func() { ctr, err = c.LoadContainer(ctx, id) })
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return failed(fmt.Errorf("containerd: load container %s: %w", id, err))
	}
	tr.part("task delete", func() { err = deleteTask(ctx, ctr, true) })
	if err != nil {
		return failed(err)
	}
	tr.part("container delete", func() { err = ctr.Delete(ctx) })
	if err != nil && !errdefs.IsNotFound(err) {
		return failed(fmt.Errorf("containerd: delete container %s: %w", id, err))
	}
	return nil
}

// failed is a rest of takeDown that reports err.
func failed(err error) func() error { return func() error { return err } }

// deleteContainer deletes the container (its task gone) while the CLI's
// teardown runs, which nothing of it depends on; the returned rest, that
// teardown's first cleanup, waits for it (its failure keeps the run
// directory for gc, as a failed cleanup does).
func deleteContainer(ctx context.Context, c *containerd.Client, id string, tr tracer) func() error {
	began := time.Now()
	deleted := make(chan error, 1)
	go func() { deleted <- c.ContainerService().Delete(ctx, id) }()
	return func() error {
		err := <-deleted
		tr.took("container delete", time.Since(began))
		if err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("containerd: delete container %s: %w", id, err)
		}
		return nil
	}
}

// deleteExited deletes the stopped task of container id ("not found" is
// gone already).
func deleteExited(ctx context.Context, c *containerd.Client, id string) error {
	_, err := c.TaskService().Delete(ctx, &tasks.DeleteTaskRequest{ContainerID: id})
	if err = errgrpc.ToNative(err); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd: delete task %s: %w", id, err)
	}
	return nil
}

// proveGone checks, after teardown, each thing containerd made for the
// run, all at once: the shim on this host, the task, the container and the
// snapshot on the daemon. left names what survives; unknown says what
// could not be checked (either makes the teardown a residue).
func (e *Engine) proveGone(ctx context.Context, id string, shim shimProc, tr tracer) (left, unknown []string) {
	began := time.Now()
	var shimTook time.Duration
	shimDone := make(chan struct{})
	go func() {
		left = shimLeft(e.Address, id, shim)
		shimTook = time.Since(began)
		close(shimDone)
	}()
	onDaemon, unknown := e.proveGoneOnDaemon(ctx, id)
	tr.took("daemon proof", time.Since(began))
	<-shimDone
	tr.took("shim exit", shimTook)
	return append(left, onDaemon...), unknown
}

// proveGoneOnDaemon asks the daemon for the task, the container and the
// snapshot of id, at once.
func (e *Engine) proveGoneOnDaemon(ctx context.Context, id string) (left, unknown []string) {
	c, ctx, err := e.connect(ctx)
	if err != nil {
		return nil, []string{fmt.Sprintf("the task, container and snapshot of %s/%s were not verified gone: %v", Namespace, id, err)}
	}
	checks := []struct {
		what string
		get  func() error
	}{
		{"containerd task", func() error {
			_, err := c.TaskService().Get(ctx, &tasks.GetRequest{ContainerID: id})
			return errgrpc.ToNative(err)
		}},
		{"containerd container", func() error { _, err := c.ContainerService().Get(ctx, id); return err }},
		{"containerd snapshot", func() error {
			_, err := c.SnapshotService(defaults.DefaultSnapshotter).Stat(ctx, id)
			return err
		}},
	}
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, ch := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ch.get()
		}()
	}
	wg.Wait()
	for i, ch := range checks {
		switch err := errs[i]; {
		case err == nil:
			left = append(left, fmt.Sprintf("%s %s/%s still exists on %s", ch.what, Namespace, id, e.Address))
		case !errdefs.IsNotFound(err):
			unknown = append(unknown, fmt.Sprintf("%s %s/%s not verified gone: %v", ch.what, Namespace, id, err))
		}
	}
	return left, unknown
}

// shimLeft waits a bounded time for the run's shim to exit and its bundle
// directory to go, and names what stays.
func shimLeft(address, id string, shim shimProc) []string {
	deadline := time.Now().Add(shimGone)
	for {
		var left []string
		if s := findShim(address, id); s.pid > 0 {
			left = append(left, fmt.Sprintf("containerd shim pid %d of %s/%s still running", s.pid, Namespace, id))
		} else if shim.pid > 0 && isShim(shim.pid, address, id) {
			left = append(left, fmt.Sprintf("containerd shim pid %d of %s/%s still running", shim.pid, Namespace, id))
		}
		if shim.bundle != "" {
			if _, err := os.Lstat(shim.bundle); !errors.Is(err, fs.ErrNotExist) {
				left = append(left, "containerd shim bundle "+shim.bundle+" left")
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shimProc is a task's shim process and its bundle directory (its working
// directory).
type shimProc struct {
	pid    int
	bundle string
}

// shimOfTask finds the shim of task id whose first process is pid: that
// process's parent, once the runtime's create has exited (the shim, a
// subreaper, adopts it), checked by its command line as findShim checks
// each process; else whatever findShim finds.
func shimOfTask(address, id string, pid int) shimProc {
	if ppid := engine.ParentPid(pid); ppid > 0 && isShim(ppid, address, id) {
		dir, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", ppid))
		return shimProc{pid: ppid, bundle: dir}
	}
	return findShim(address, id)
}

// findShim finds the shim of task id on the daemon at address among this
// host's processes: a containerd-shim-* whose command line names
// agentbox's namespace, the id and the address.
func findShim(address, id string) shimProc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return shimProc{}
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !isShim(pid, address, id) {
			continue
		}
		dir, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		return shimProc{pid: pid, bundle: dir}
	}
	return shimProc{}
}

// isShim reports whether pid is the shim of task id on the daemon at
// address.
func isShim(pid int, address, id string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return shimArgs(strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"), address, id)
}

// shimArgs reports whether argv is the command line of a shim of task id
// in agentbox's namespace on the daemon at address (containerd starts
// each as "containerd-shim-runc-v2 -namespace NS -id ID -address ADDR").
// The same binary's "start" (which forks the shim) and "delete" (the
// daemon's cleanup once a shim has gone, run after every task's end) carry
// the same flags and a command last: they are not the shim, and the
// cleanup, which outlives the shim by as long as the host makes it wait,
// would otherwise count as a shim still running.
func shimArgs(argv []string, address, id string) bool {
	if len(argv) == 0 || !strings.HasPrefix(filepath.Base(argv[0]), "containerd-shim") {
		return false
	}
	if last := argv[len(argv)-1]; last == "start" || last == "delete" {
		return false
	}
	flag := func(name string) string {
		i := slices.Index(argv, name)
		if i < 0 || i+1 >= len(argv) {
			return ""
		}
		return argv[i+1]
	}
	return flag("-namespace") == Namespace && flag("-id") == id && flag("-address") == address
}

// borrow makes c, the connection of the engine that created the run,
// this engine's, unless it has one of its own.
func (e *Engine) borrow(c *containerd.Client) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client == nil && e.connErr == nil && c != nil {
		e.client, e.borrowed = c, true
	}
}

func (e *Engine) closeClient() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client != nil && !e.borrowed {
		e.client.Close()
	}
	e.client, e.borrowed = nil, false
}
