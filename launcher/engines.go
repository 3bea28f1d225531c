package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/userengine"
)

// The engines a launch can run on (--engine).
const (
	// EngineRuntime drives the plan's OCI runtime through its command
	// line (engine.Runtime), the default.
	EngineRuntime = "runtime"
	// EngineContainerd runs the sandbox as a task of a containerd daemon
	// (package engine/containerd; docs/containerd.md). Only agentbox-ext
	// links it (ProvideEngine); the launch binary hands such a run to it.
	EngineContainerd = "containerd"
)

// containerdRecordFile is engine/containerd's RecordFile, the file of a
// run's bundle that says the run is on containerd (a test checks that the
// two agree): the launch binary, which does not link that engine, reads
// it to hand such a run's gc to agentbox-ext.
const containerdRecordFile = "containerd.json"

// EngineProvider is an engine the binary links beyond the runtime's
// command line: Open is its Opener on the daemon at address ("" for its
// default), Recorded the Opener of a run whose bundle records it (ok
// false for a run of another engine).
type EngineProvider struct {
	Open     func(address string) engine.Opener
	Recorded func(bundle string) (open engine.Opener, ok bool)
}

var providers = map[string]EngineProvider{}

// ProvideEngine links the engine called name (agentbox-ext's containerd).
// It is called from an init, before any launch.
func ProvideEngine(name string, p EngineProvider) { providers[name] = p }

// ErrEngineElsewhere is what OpenEngine and CollectGarbage answer for an
// engine this binary does not link: the command is agentbox-ext's
// (ExecHelper), whole.
var ErrEngineElsewhere = errors.New("the engine is linked into agentbox-ext, not into this binary")

// OpenEngine is the Opener of the engine called name ("" for
// EngineRuntime); address is the containerd daemon's socket ("" for
// containerd's default), and only containerd takes one.
func OpenEngine(name, address string) (engine.Opener, error) {
	switch name {
	case "", EngineRuntime:
		if address != "" {
			return nil, WithKind(KindUsage, fmt.Errorf("--address %s is the containerd daemon's socket; it needs --engine containerd", address))
		}
		return engine.OpenRuntime, nil
	case EngineContainerd:
		p, ok := providers[name]
		if !ok {
			return nil, fmt.Errorf("--engine %s: %w", name, ErrEngineElsewhere)
		}
		return p.Open(address), nil
	default:
		return nil, WithKind(KindUsage, fmt.Errorf("--engine %q: unknown engine; use %s (the OCI runtime's command line, the default) or %s", name, EngineRuntime, EngineContainerd))
	}
}

// recordedEngine is the engine that takes the run in rd down: the
// containerd daemon its bundle records, for a run on containerd, else
// open. A gc that was not told the engine still cleans each run on its own.
func recordedEngine(rd *engine.RunDir, open engine.Opener) engine.Opener {
	if p, ok := providers[EngineContainerd]; ok {
		if o, ok := p.Recorded(rd.Bundle()); ok {
			return o
		}
	}
	if e, ok := userengine.Recorded(rd.Bundle()); ok {
		return func(engine.Runtime) engine.Engine { return e }
	}
	return open
}

// elsewhere reports a stale run that an engine this binary does not link
// must take down: the gc is then agentbox-ext's, before anything is
// cleaned.
func elsewhere(stale []*engine.RunDir) error {
	if _, ok := providers[EngineContainerd]; ok {
		return nil
	}
	for _, rd := range stale {
		if _, err := os.Lstat(filepath.Join(rd.Bundle(), containerdRecordFile)); err == nil {
			return fmt.Errorf("run %s is on containerd: %w", rd.ID, ErrEngineElsewhere)
		}
	}
	return nil
}
