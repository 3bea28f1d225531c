package selftest

import (
	"context"
	"fmt"
	"os"
	"runtime"
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

// Run runs the probes cfg selects, one after the other in the calling
// process, and hands each result to emit as soon as it is known. It stops at
// the first error of emit or when ctx is done.
func Run(ctx context.Context, e *Env, emit func(Result) error) error {
	probes, err := Selected(e.Config)
	if err != nil {
		return err
	}
	for _, p := range probes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(p.Run(e)); err != nil {
			return fmt.Errorf("emit %s: %w", p.Name, err)
		}
	}
	return nil
}
