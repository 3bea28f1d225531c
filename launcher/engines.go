package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/engine/containerd/ctrversion"
	"github.com/agentbox/agentbox/engine/userengine"
	"github.com/agentbox/agentbox/policy"
)

// The engines a launch can run on (--engine).
const (
	// EngineRuntime drives the plan's OCI runtime through its command
	// line (engine.Runtime), the default.
	EngineRuntime = policy.EngineRuntime
	// EngineContainerd runs the sandbox as a task of a containerd daemon
	// (package engine/containerd; docs/containerd.md). Only
	// agentbox-containerd links it (ProvideEngine); the launch binary, and
	// agentbox-ext, hand such a run to it.
	EngineContainerd = policy.EngineContainerd
)

// containerdRecordFile is engine/containerd's RecordFile, the file of a
// run's bundle that says the run is on containerd (a test checks that the
// two agree): the launch binary, which does not link that engine, reads
// it to hand such a run's gc to agentbox-containerd.
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

// ProvideEngine links the engine called name (agentbox-containerd's
// containerd).
// It is called from an init, before any launch.
func ProvideEngine(name string, p EngineProvider) { providers[name] = p }

// ErrEngineElsewhere is what OpenEngine and CollectGarbage answer for an
// engine this binary does not link: the command is agentbox-containerd's
// (ExecHelper), whole.
var ErrEngineElsewhere = errors.New("the engine is linked into " + ContainerdHelperName + ", not into this binary")

// EngineElsewhere reports, before anything of a launch is done, that the
// merged policy of cfg (flags, and the policy files the launcher would
// believe) names an engine this binary does not link: the command is then
// agentbox-containerd's, whole (ExecHelper). Any other problem of the policy is
// left to the launch, which reports it in its place.
func EngineElsewhere(cfg Config) error {
	if cfg.Engine != nil {
		return nil
	}
	p, _, err := LoadPolicy(cfg.Policy, cfg.Sources)
	if err != nil || p.Engine != EngineContainerd {
		return nil
	}
	if _, ok := providers[p.Engine]; ok {
		return nil
	}
	return fmt.Errorf("engine %s: %w", p.Engine, ErrEngineElsewhere)
}

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

// policyEngine is the engine the merged policy p names (--engine and
// --address, or engine: and address: in a policy file the launcher
// believed), for a launcher of effective uid euid, and the words the
// run's record keeps of it. A daemon socket that someone other than root
// or euid could have put there is refused: a daemon there would be handed
// the sandbox's spec and would report its pids, which the host's
// verification then reads.
func policyEngine(p policy.Policy, euid uint32) (engine.Opener, string, error) {
	if policy.TargetOf(p) == policy.TargetUser {
		// The account's own engine (user.go) runs it: no daemon is asked,
		// and the record must not name one.
		note := "none: --isolation user runs the agent as the dedicated account, on no engine"
		if p.Engine == EngineContainerd {
			note += " (the policy's engine: containerd does not apply to it)"
		}
		return engine.OpenRuntime, note, nil
	}
	if p.Engine != EngineContainerd {
		open, err := OpenEngine(p.Engine, p.Address)
		return open, "runtime: the OCI runtime's command line, the default (containerd only when asked: --engine containerd, or engine: containerd in a policy file)", err
	}
	// The socket is judged first, in whichever binary plans the run: the
	// launch binary refuses a socket others control before it hands the
	// run to agentbox-containerd (ErrEngineElsewhere), which judges it
	// again.
	addr := p.Address
	if addr == "" {
		addr = ctrversion.DefaultAddress
	}
	if err := trustedSocket(addr, euid); err != nil {
		return nil, "", WithKind(KindUsage, err)
	}
	open, err := OpenEngine(p.Engine, p.Address)
	if err != nil {
		return nil, "", err
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

// elsewhere reports a stale run that an engine this binary does not link
// must take down: the gc is then agentbox-containerd's, before anything
// is cleaned.
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
