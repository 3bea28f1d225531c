package launcher

import (
	"fmt"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/containerd"
	"github.com/agentbox/agentbox/engine/userengine"
)

// The engines a launch can run on (--engine).
const (
	// EngineRuntime drives the plan's OCI runtime through its command
	// line (engine.Runtime), the default.
	EngineRuntime = "runtime"
	// EngineContainerd runs the sandbox as a task of a containerd daemon
	// (package engine/containerd; docs/containerd.md).
	EngineContainerd = "containerd"
)

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
		return containerd.Opener(address), nil
	default:
		return nil, WithKind(KindUsage, fmt.Errorf("--engine %q: unknown engine; use %s (the OCI runtime's command line, the default) or %s", name, EngineRuntime, EngineContainerd))
	}
}

// recordedEngine is the engine that takes the run in rd down: the
// containerd daemon its bundle records, for a run on containerd, else
// open. A gc that was not told the engine still cleans each run on its own.
func recordedEngine(rd *engine.RunDir, open engine.Opener) engine.Opener {
	if o, ok := containerd.Recorded(rd.Bundle()); ok {
		return o
	}
	if e, ok := userengine.Recorded(rd.Bundle()); ok {
		return func(engine.Runtime) engine.Engine { return e }
	}
	return open
}
