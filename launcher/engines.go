package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/containerd"
	"github.com/agentbox/agentbox/engine/userengine"
	"github.com/agentbox/agentbox/policy"
)

// The engines a launch can run on (--engine).
const (
	// EngineRuntime drives the plan's OCI runtime through its command
	// line (engine.Runtime), the default.
	EngineRuntime = policy.EngineRuntime
	// EngineContainerd runs the sandbox as a task of a containerd daemon
	// (package engine/containerd; docs/containerd.md).
	EngineContainerd = policy.EngineContainerd
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

// policyEngine is the engine the merged policy p names (--engine and
// --address, or engine: and address: in a policy file the launcher
// believed), for a launcher of effective uid euid, and the words the
// run's record keeps of it. A daemon socket that someone other than root
// or euid could have put there is refused: a daemon there would be handed
// the sandbox's spec and would report its pids, which the host's
// verification then reads.
func policyEngine(p policy.Policy, euid uint32) (engine.Opener, string, error) {
	open, err := OpenEngine(p.Engine, p.Address)
	if err != nil || p.Engine != EngineContainerd {
		return open, "runtime: the OCI runtime's command line, the default (containerd only when asked: --engine containerd, or engine: containerd in a policy file)", err
	}
	addr := p.Address
	if addr == "" {
		addr = containerd.DefaultAddress
	}
	if err := trustedSocket(addr, euid); err != nil {
		return nil, "", WithKind(KindUsage, err)
	}
	return open, "containerd at " + addr + ": asked for by the policy (--engine, or engine: in a policy file)", nil
}

// trustedSocket refuses a socket, or a directory above it, owned by
// someone other than root or euid, or a directory above it that group or
// others may write without the sticky bit. A socket that does not exist
// is left to the engine, which says so when it dials; its directories
// are still checked.
func trustedSocket(path string, euid uint32) error {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		var st unix.Stat_t
		err := unix.Lstat(p, &st)
		switch {
		case errors.Is(err, unix.ENOENT) && p == filepath.Clean(path):
			// the engine says so when it dials; the directory still counts
		case err != nil:
			return fmt.Errorf("containerd address %s: %s: %w", path, p, err)
		case st.Uid != 0 && st.Uid != euid:
			return fmt.Errorf("containerd address %s: %s is owned by uid %d, neither root nor you, so its daemon could be theirs; point --address (or address:) at a daemon of root's or yours", path, p, st.Uid)
		case p != filepath.Clean(path) && st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
			return fmt.Errorf("containerd address %s: %s is writable by group or others (mode %04o), so another user could put a socket of theirs there; use a socket in a directory only root or you can write", path, p, st.Mode&0o7777)
		}
		if p == "/" {
			return nil
		}
	}
}

// openEngine sets the launch's engine from its merged policy, unless the
// caller gave one (tests' fakes).
func (pl *planned) openEngine() error {
	if pl.l.cfg.Engine != nil {
		return nil
	}
	open, note, err := policyEngine(pl.policy, uint32(os.Geteuid()))
	if err != nil {
		return err
	}
	pl.l.cfg.Engine, pl.engineNote = open, note
	return nil
}
