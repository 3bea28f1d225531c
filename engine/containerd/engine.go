package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	runcoptions "github.com/containerd/containerd/api/types/runc/options"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/containerd/ctrversion"
	"github.com/agentbox/agentbox/policy"
)

// DefaultAddress is containerd's own socket, which --address overrides.
const DefaultAddress = ctrversion.DefaultAddress

// Namespace is agentbox's containerd namespace: its containers never mix
// with Kubernetes' (k8s.io), Docker's (moby) or nerdctl's (default).
const Namespace = "agentbox"

// shimRuntimeType is the shim that runs the sandbox: containerd's runc v2
// shim, which takes the runtime binary and its state directory per
// container.
const shimRuntimeType = "io.containerd.runc.v2"

// dialTimeout bounds how long the engine waits for the daemon to answer.
const dialTimeout = 5 * time.Second

// Engine is the containerd engine for one run: the daemon at Address, the
// runtime the plan chose (as the shim's binary) and the task it created.
// Make it with Opener.
type Engine struct {
	// Address is the daemon's socket.
	Address string
	// Runtime is the runtime the shim runs, its state directory, and the
	// helper that passes the sandbox's files (agentbox-init).
	Runtime engine.Runtime

	mu      sync.Mutex
	client  *containerd.Client
	connErr error
	// borrowed: client is the connection of the engine that created the
	// run being torn down (runs), which that engine closes, not this one.
	borrowed bool
}

// Opener makes the containerd engine on the daemon at address ("" for
// DefaultAddress) for a run with runtime r.
func Opener(address string) engine.Opener {
	if address == "" {
		address = DefaultAddress
	}
	return func(r engine.Runtime) engine.Engine {
		return &Engine{Address: address, Runtime: r}
	}
}

var (
	_ engine.Engine = (*Engine)(nil)
	_ engine.Waiter = (*Engine)(nil)
)

// ProcRoot is /proc: a containerd task is a process of this host.
func (e *Engine) ProcRoot() string { return "/proc" }

// GrantMethod is the runtime's: the shim runs it on the same bundle.
func (e *Engine) GrantMethod(ctx context.Context) (method, reason string) {
	return e.Runtime.GrantMethod(ctx)
}

// WriteBundle checks that the daemon answers, writes the bundle as the
// runtime CLI does (the same config.json, root and nested binds), and
// records the daemon for gc. The daemon is dialled while the bundle is
// written: neither waits for the other, and a daemon that does not answer
// fails the step all the same (the run directory, bundle included, is
// then torn down as after any failed step). When the daemon runs in this
// process's mount namespace (daemonSharesMounts), the synthesized root
// goes into a tmpfs on the bundle's root, as the runtime CLI's does
// (Runtime.RootTmpfs): its shims, and their runtime, see that mount, and
// Create proves that the task's root is it (sameRoot).
func (e *Engine) WriteBundle(dir string, s *specs.Spec, rootfs policy.Rootfs) error {
	if err := e.supported(); err != nil {
		return err
	}
	tr := tracer{step: "bundle"}
	tr.part("mount namespace", func() { e.Runtime.RootTmpfs = daemonSharesMounts(e.Address) })
	dialed := make(chan error, 1)
	go func() {
		began := time.Now()
		_, _, err := e.connect(context.Background())
		tr.took("dial", time.Since(began))
		dialed <- err
	}()
	var err error
	tr.part("write", func() { err = e.Runtime.WriteBundle(dir, s, rootfs) })
	if dialErr := <-dialed; dialErr != nil {
		return dialErr
	}
	if err != nil {
		return err
	}
	return writeRecord(dir, Record{Address: e.Address, Namespace: Namespace})
}

// supported refuses what the engine cannot run: a rootless launcher (the
// daemon's socket is root's, and a shim cannot enter the launcher's user
// namespace) and gVisor (whose shim is not runc's).
func (e *Engine) supported() error {
	if e.Runtime.UserNS != nil {
		return errors.New("the containerd engine needs root: a rootless launcher cannot use the daemon's socket; run as root, or use --engine runtime")
	}
	if e.Runtime.Name == "runsc" {
		return errors.New("the containerd engine runs runc or crun under containerd's runc shim; gVisor (runsc) needs its own shim (containerd-shim-runsc-v1), which agentbox does not drive: use --engine runtime --runtime runsc")
	}
	return nil
}

// connect dials the daemon once and checks its version (Gate). A daemon
// that did not answer is not asked again by this engine.
func (e *Engine) connect(ctx context.Context) (*containerd.Client, context.Context, error) {
	ctx = namespaces.WithNamespace(ctx, Namespace)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client == nil && e.connErr == nil {
		e.client, e.connErr = dial(ctx, e.Address)
	}
	return e.client, ctx, e.connErr
}

func dial(ctx context.Context, address string) (*containerd.Client, error) {
	fix := "start it (the tests' own: scripts/containerd-up.sh), or point --address at its socket"
	if _, err := os.Stat(address); err != nil {
		return nil, fmt.Errorf("containerd at %s: no socket (%w): %s", address, err, fix)
	}
	c, err := containerd.New(address, containerd.WithDefaultNamespace(Namespace), containerd.WithTimeout(dialTimeout))
	if err != nil {
		return nil, fmt.Errorf("containerd at %s does not answer: %w: %s", address, err, fix)
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	v, err := c.Version(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("containerd at %s does not answer: %w: %s", address, err, fix)
	}
	if err := ctrversion.Gate(v.Version); err != nil {
		c.Close()
		return nil, fmt.Errorf("containerd at %s: %w", address, err)
	}
	return c, nil
}

// Create makes the container from the bundle's spec and its task (the
// runtime's create: the sandbox exists, its command waits), and returns
// the host pid of its first process.
func (e *Engine) Create(ctx context.Context, id, bundle string, o engine.CreateOptions) (int, error) {
	if err := e.supported(); err != nil {
		return 0, err
	}
	c, ctx, err := e.connect(ctx)
	if err != nil {
		return 0, err
	}
	s, err := readSpec(bundle)
	if err == nil {
		s, err = shimSpec(s, bundle)
	}
	if err != nil {
		return 0, err
	}
	binary, err := shimRuntime(e.Runtime, bundle, len(o.ExtraFiles), oneOutput(o))
	if err != nil {
		return 0, err
	}
	// Recorded before the daemon is asked: from here on, teardown and gc
	// must find out what the daemon holds of the run.
	if err := writeRecord(bundle, Record{Address: e.Address, Namespace: Namespace, Container: true}); err != nil {
		return 0, err
	}
	tr := tracer{step: "create"}
	var ctr containerd.Container
	tr.part("container", func() {
		ctr, err = newContainer(ctx, c, id,
			containerd.WithRuntime(shimRuntimeType, &runcoptions.Options{BinaryName: binary, Root: e.Runtime.Root}),
			containerd.WithSpec(s),
			containerd.WithContainerLabels(map[string]string{"agentbox.bundle": bundle}))
	})
	if err != nil {
		return 0, fmt.Errorf("containerd: create container %s: %w", id, err)
	}
	r, err := e.newTask(ctx, ctr, bundle, o, tr)
	if err != nil {
		return 0, err
	}
	if binary != e.Runtime.Path {
		// The create was the helper's only work: every later call of the
		// shim's (start, kill, delete) it passes to the runtime unchanged.
		// The link names the runtime itself from now on, so that none of
		// them costs a helper's process; were it left, the helper would
		// still pass them on.
		_ = relink(binary, e.Runtime.Path)
	}
	r.client = c
	addRun(e.Address, id, r)
	tr.part("shim record", func() { e.recordShim(bundle, id, int(r.task.Pid())) })
	// The runtime ran in the daemon's mount namespace: its root must be
	// the bundle's root as this launcher wrote it (a tmpfs on it, or the
	// directory), not what another namespace has at that path.
	if err := sameRoot(int(r.task.Pid()), s.Root.Path); err != nil {
		return 0, fmt.Errorf("containerd: task %s: %w", id, err)
	}
	return int(r.task.Pid()), nil
}

// newContainer creates the container as the client's NewContainer does,
// without its lease (which keeps an image's snapshot and content from the
// daemon's garbage collector while a container is made of them; this one
// has neither) and without its look-up of the namespace's default runtime
// (the runtime is given): one write to the daemon's database, not three.
func newContainer(ctx context.Context, c *containerd.Client, id string, opts ...containerd.NewContainerOpts) (containerd.Container, error) {
	rec := containers.Container{ID: id}
	for _, o := range opts {
		if err := o(ctx, c, &rec); err != nil {
			return nil, err
		}
	}
	if _, err := c.ContainerService().Create(ctx, rec); err != nil {
		return nil, err
	}
	return c.LoadContainer(ctx, id)
}

// newTask creates the task: the shim starts, runs the runtime's create
// (through fds-exec, which fetches the extra files here), and the exit
// status is subscribed to before anything can start.
func (e *Engine) newTask(ctx context.Context, ctr containerd.Container, bundle string, o engine.CreateOptions, tr tracer) (*run, error) {
	io, err := newStdio(o, filepath.Join(filepath.Dir(bundle), "fifo"))
	if err != nil {
		return nil, err
	}
	var fds *fdServer
	if len(o.ExtraFiles) > 0 {
		if fds, err = serveFds(filepath.Join(bundle, fdsSocketFile), o.ExtraFiles); err != nil {
			io.close()
			return nil, err
		}
	}
	var task containerd.Task
	tr.part("task", func() { task, err = ctr.NewTask(ctx, io.creator()) })
	if fds != nil {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		handed := fds.close(closeCtx)
		cancel()
		if err == nil && !handed {
			err = errors.New("the shim's runtime never fetched the sandbox's files")
		}
	}
	if err != nil {
		io.close()
		return nil, fmt.Errorf("containerd: create task %s: %w", ctr.ID(), err)
	}
	// The wait outlives Create's context: it ends with the task.
	var exit <-chan containerd.ExitStatus
	tr.part("wait", func() { exit, err = task.Wait(namespaces.WithNamespace(context.Background(), Namespace)) })
	if err != nil {
		io.close()
		return nil, fmt.Errorf("containerd: wait for task %s: %w", ctr.ID(), err)
	}
	io.attach(task)
	return &run{task: task, exit: exit, io: io}, nil
}

// recordShim adds the task's shim to the bundle's record, so that teardown
// (in this launcher or a later gc) can prove it gone.
func (e *Engine) recordShim(bundle, id string, pid int) {
	s := shimOfTask(e.Address, id, pid)
	_ = writeRecord(bundle, Record{Address: e.Address, Namespace: Namespace, Container: true, ShimPid: s.pid, ShimBundle: s.bundle})
}

// Start runs the created task's command.
func (e *Engine) Start(ctx context.Context, id string) error {
	r, err := e.run(id)
	if err != nil {
		return err
	}
	_, ctx, err = e.connect(ctx)
	if err != nil {
		return err
	}
	// The session sized the launcher's pty after Create; the task gets
	// that size now, before its process can ask, not at followSize's next
	// tick (a race that showed as "0 0" from stty size under load).
	var sized unix.Winsize
	r.io.resize(ctx, r.task, &sized)
	tracer{step: "start"}.part("task", func() { err = r.task.Start(ctx) })
	if err != nil {
		return fmt.Errorf("containerd: start task %s: %w", id, err)
	}
	return nil
}

func (e *Engine) run(id string) (*run, error) {
	r := findRun(e.Address, id, false)
	if r == nil {
		return nil, fmt.Errorf("containerd: no task %s created by this launcher: %w", id, engine.ErrNotFound)
	}
	return r, nil
}

// Wait returns the exit code of the task's first process once its output
// has been passed on (see engine.Waiter).
func (e *Engine) Wait(id string) (int, error) {
	r, err := e.run(id)
	if err != nil {
		return -1, err
	}
	st := <-r.exit
	code, _, err := st.Result()
	if err == nil {
		r.setExited()
	}
	r.io.finish()
	if err != nil {
		return -1, fmt.Errorf("containerd: wait for task %s: %w", id, err)
	}
	return int(code), nil
}

// Kill signals the task's first process, or all its processes.
func (e *Engine) Kill(ctx context.Context, id string, sig syscall.Signal, all bool) error {
	task, ctx, err := e.loadTask(ctx, id)
	if err != nil {
		return err
	}
	var opts []containerd.KillOpts
	if all {
		opts = append(opts, containerd.WithKillAll)
	}
	return notFound(task.Kill(ctx, sig, opts...), "kill task", id)
}

// Delete deletes the task (killing it first when force) and the container.
func (e *Engine) Delete(ctx context.Context, id string, force bool) error {
	c, ctx, err := e.connect(ctx)
	if err != nil {
		return err
	}
	ctr, err := c.LoadContainer(ctx, id)
	if err != nil {
		return notFound(err, "load container", id)
	}
	if err := deleteTask(ctx, ctr, force); err != nil {
		return err
	}
	return notFound(ctr.Delete(ctx), "delete container", id)
}

func deleteTask(ctx context.Context, ctr containerd.Container, force bool) error {
	task, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("containerd: load task %s: %w", ctr.ID(), err)
	}
	var opts []containerd.ProcessDeleteOpts
	if force {
		opts = append(opts, containerd.WithProcessKill)
	}
	if _, err := task.Delete(ctx, opts...); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("containerd: delete task %s: %w", ctr.ID(), err)
	}
	return nil
}

// State reports the task as the runtime would report the container.
func (e *Engine) State(ctx context.Context, id string) (engine.State, error) {
	task, ctx, err := e.loadTask(ctx, id)
	if err != nil {
		return engine.State{}, err
	}
	st, err := task.Status(ctx)
	if err != nil {
		return engine.State{}, notFound(err, "task status", id)
	}
	info, err := task.Spec(ctx)
	bundle := ""
	if err == nil && info.Root != nil {
		bundle = filepath.Dir(info.Root.Path)
	}
	return engine.State{ID: id, Pid: int(task.Pid()), Status: string(st.Status), Bundle: bundle}, nil
}

func (e *Engine) loadTask(ctx context.Context, id string) (containerd.Task, context.Context, error) {
	c, ctx, err := e.connect(ctx)
	if err != nil {
		return nil, ctx, err
	}
	ctr, err := c.LoadContainer(ctx, id)
	if err != nil {
		return nil, ctx, notFound(err, "load container", id)
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return nil, ctx, notFound(err, "load task", id)
	}
	return task, ctx, nil
}

// notFound wraps a daemon's error; its "not found" becomes
// engine.ErrNotFound.
func notFound(err error, what, id string) error {
	switch {
	case err == nil:
		return nil
	case errdefs.IsNotFound(err):
		return fmt.Errorf("containerd: %s %s: %w", what, id, engine.ErrNotFound)
	default:
		return fmt.Errorf("containerd: %s %s: %w", what, id, err)
	}
}
