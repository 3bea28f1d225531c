package selftest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
)

// Group is the surface a probe belongs to.
type Group string

// The groups of the catalog, in the order Catalog lists them.
const (
	GroupBoundary   Group = "boundary"
	GroupKernel     Group = "kernel"
	GroupFilesystem Group = "filesystem"
	GroupProcess    Group = "process"
	GroupNetwork    Group = "network"
)

// Probe is one check run from inside the sandbox.
type Probe struct {
	// Name is stable kebab-case; it is the "probe" field of a Result.
	Name string
	// Group is the surface the probe checks.
	Group Group
	// Expect is the decision of a sound sandbox.
	Expect Decision
	// Summary says in a line what the probe tries.
	Summary string

	run func(e *Env) outcome
	// shares says what of the sandbox the probe's run would change, were
	// the kernel to allow its operation, and what its answer reads; nil:
	// neither (see Run). It gets the Env because what a probe does can
	// depend on the configuration.
	shares func(e *Env) (changes, reads resource)
}

// resource is a part of the sandbox's state that a probe could change,
// were the kernel to allow what it tries, and that another probe's
// answer depends on. Run never runs a probe that changes one while a
// probe that reads it (or changes it too) runs.
type resource uint8

const (
	// mountTable is the mount namespace's mounts: mount-tmpfs-denied and
	// umount-denied would change it, mountinfo's readers read it.
	mountTable resource = 1 << iota
	// traceTarget is the ptrace probes' target (PID 1, init, which serves
	// the gateway bridge) running: a PTRACE_SEIZE that works stops it
	// until the detach.
	traceTarget
	// loopbackTCP is the TCP listeners on the sandbox's loopback: the
	// loopback control of gateway-reachable opens one on a port of the
	// kernel's choosing, the canaries' probes connect to loopback ports.
	loopbackTCP
	// nResources is the number of resources.
	nResources = iota
)

// changing and reading are Probe.shares for a probe that always changes,
// or always reads, the resources r.
func changing(r resource) func(*Env) (resource, resource) {
	return func(*Env) (resource, resource) { return r, 0 }
}

func reading(r resource) func(*Env) (resource, resource) {
	return func(*Env) (resource, resource) { return 0, r }
}

// outcome is what a probe's run function decides; Run adds the rest.
type outcome struct {
	target   string
	decision Decision
	observed string
	detail   string
}

// Env is what probes read: the configuration and the process's view of the
// system. NewEnv fills it for the running process.
type Env struct {
	// Config holds targets, canaries and allow lists.
	Config *InitConfig
	// Proc is the procfs mount, "/proc" for real runs.
	Proc string
	// Environ is the environment the probes judge, os.Environ() for real runs.
	Environ []string

	// mounts, set for the probes of one Run, holds the mount table that
	// the probes reading it share (see Env.readMounts).
	mounts *mountCache
}

// mountCache is the mount table as one read of Proc's self/mountinfo gave
// it, until a probe that could change the table (resource mountTable) has
// run: Run never runs that probe beside a reader, so every reader sees the
// table a read of its own would have given it, from one read and one parse
// instead of one each.
type mountCache struct {
	mu     sync.Mutex
	valid  bool
	mounts []Mount
	err    error
}

// readMounts is the mount table of the calling process under e.Proc: the
// one cached for this Run when there is one, else read now. Callers only
// read the slice.
func (e *Env) readMounts() ([]Mount, error) {
	c := e.mounts
	if c == nil {
		return readMounts(e.Proc)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid {
		c.mounts, c.err = readMounts(e.Proc)
		c.valid = true
	}
	return c.mounts, c.err
}

// forget drops the cached table: the next reader reads it again.
func (c *mountCache) forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.valid, c.mounts, c.err = false, nil, nil
}

// NewEnv returns the Env of the running process for cfg.
func NewEnv(cfg *InitConfig) *Env {
	return &Env{Config: cfg, Proc: "/proc", Environ: os.Environ()}
}

// Run runs p in e and returns its result for run cfg.RunID.
func (p Probe) Run(e *Env) Result {
	o := p.run(e)
	r := Result{
		Probe: p.Name, Target: o.target, Expect: p.Expect, Decision: o.decision,
		Observed: o.observed, RunID: e.Config.RunID, Detail: o.detail,
	}
	if r.Decision == "" {
		r.Decision = Unknown
	}
	r.Evidence = r.Digest()
	return r
}

// Catalog returns every probe of this OS, grouped and in a stable order.
func Catalog() []Probe { return CatalogFor(runtime.GOOS) }

// CatalogFor is the catalog of the OS goos (runtime.GOOS's names): every
// probe, and on darwin its own at the end (probe_macos.go).
func CatalogFor(goos string) []Probe {
	var all []Probe
	for _, g := range [][]Probe{boundaryProbes(), kernelProbes(), statusProbes(), filesystemProbes(), processProbes(), networkProbes(), workspaceProbes()} {
		all = append(all, g...)
	}
	if goos == "darwin" {
		all = append(all, darwinProbes()...)
	}
	return all
}

// Lookup returns the probe called name.
func Lookup(name string) (Probe, bool) {
	for _, p := range Catalog() {
		if p.Name == name {
			return p, true
		}
	}
	return Probe{}, false
}

// Selected returns the probes cfg.Probes names, in catalog order, or every
// probe when cfg.Probes is nil.
func Selected(cfg *InitConfig) ([]Probe, error) {
	all := Catalog()
	if cfg.Probes == nil {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range cfg.Probes {
		if _, ok := Lookup(n); !ok {
			return nil, fmt.Errorf("unknown probe %q", n)
		}
		want[n] = true
	}
	var out []Probe
	for _, p := range all {
		if want[p.Name] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Parallelism is how many probes Run runs at once. Most probes wait on
// the kernel (a seccomp listener's answer, a route lookup, a connect
// through the gateway bridge), so they overlap well even on one CPU.
const Parallelism = 8

// Run runs the probes cfg selects and hands each result to emit in
// catalog order, each as soon as it and every probe before it are done.
// It stops at the first error of emit or when ctx is done (probes
// already running then finish unreported).
//
// Up to Parallelism probes run at once, each on a goroutine of its own,
// under two rules that keep every answer what a run one after the other
// gives:
//   - A probe that would change a part of the sandbox's state if the
//     kernel allowed its operation (the mount table, the ptrace target's
//     run state, a loopback listener: see resource) never runs beside a
//     probe whose answer reads that part, nor beside another that changes
//     it.
//   - A probe whose operation changes its own thread when allowed (setns,
//     ptrace: the tracer is a thread) leaves that goroutine locked to its
//     thread, which Go then retires with the goroutine: no other probe
//     runs on a thread a probe changed. Everything else a probe opens it
//     closes, and none changes process-wide state (cwd, root, limits,
//     credentials) even where the kernel allows its call.
func Run(ctx context.Context, e *Env, emit func(Result) error) error {
	return RunBatched(ctx, e, emit, nil)
}

// RunBatched is Run that also calls idle (when not nil) whenever the next
// result is not known yet, before it waits for it, and once after the
// last: a caller that buffers what emit writes flushes there, so that
// results known together leave together and none waits for a later one.
func RunBatched(ctx context.Context, e *Env, emit func(Result) error, idle func() error) error {
	probes, err := Selected(e.Config)
	if err != nil {
		return err
	}
	return runProbes(ctx, e, probes, Parallelism, emit, idle)
}

// runProbes runs probes, at most limit at once (see Run), and emits
// their results in order, calling idle as RunBatched says.
func runProbes(ctx context.Context, e *Env, probes []Probe, limit int, emit func(Result) error, idle func() error) error {
	flush := func() error { return nil }
	if idle != nil {
		flush = idle
	}
	// The probes of this run share one read of the mount table, which
	// lockFor drops whenever a probe that could change it is done.
	shared := *e
	shared.mounts = &mountCache{}
	e = &shared
	results := make([]Result, len(probes))
	done := make([]chan struct{}, len(probes))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var locks [nResources]sync.RWMutex
	stop := make(chan struct{})
	defer close(stop)
	slots := make(chan struct{}, max(limit, 1))
	go func() {
		for i, p := range probes {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			go func() {
				defer func() { <-slots }()
				defer close(done[i])
				unlock := lockFor(&locks, p, e)
				defer unlock()
				results[i] = p.Run(e)
			}()
		}
	}()
	for i, p := range probes {
		select {
		case <-done[i]:
		default:
			if err := flush(); err != nil {
				return err
			}
			select {
			case <-done[i]:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(results[i]); err != nil {
			return fmt.Errorf("emit %s: %w", p.Name, err)
		}
	}
	return flush()
}

// lockFor takes p's locks, in resource order: the write lock of each
// resource it changes, the read lock of each it reads. It returns their
// release.
func lockFor(locks *[nResources]sync.RWMutex, p Probe, e *Env) func() {
	if p.shares == nil {
		return func() {}
	}
	changes, reads := p.shares(e)
	var held []func()
	for i := range nResources {
		r := resource(1) << i
		switch {
		case changes&r != 0:
			locks[i].Lock()
			if r == mountTable {
				// Dropped before the lock is: no reader sees the table as
				// it was before this probe ran.
				held = append(held, e.mounts.forget)
			}
			held = append(held, locks[i].Unlock)
		case reads&r != 0:
			locks[i].RLock()
			held = append(held, locks[i].RUnlock)
		}
	}
	return func() {
		for _, u := range held {
			u()
		}
	}
}
