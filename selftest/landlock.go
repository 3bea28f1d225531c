package selftest

import (
	"errors"
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// ErrLandlockTooOld is returned when the kernel's Landlock ABI is below the
// plan's MinABI.
var ErrLandlockTooOld = errors.New("landlock ABI below the plan's minimum")

// LandlockStatus records what Landlock enforces on the agent.
type LandlockStatus struct {
	// ABI is the kernel's Landlock ABI version; 0 means Landlock is unavailable.
	ABI int `json:"abi"`
	// FS, Net and Scoped say which rule kinds are enforced: filesystem paths,
	// TCP ports (ABI 4), and abstract-socket and signal scoping (ABI 6).
	FS     bool `json:"fs"`
	Net    bool `json:"net"`
	Scoped bool `json:"scoped"`
	// UnixSockets is true when connecting to a pathname unix socket bound
	// outside the agent's domain is refused too (ABI 9): a host program's
	// socket in the workspace, even one bound after launch.
	UnixSockets bool `json:"unix_sockets,omitempty"`
	// Skipped lists optional paths of the plan that did not exist.
	Skipped []string `json:"skipped,omitempty"`
}

// LandlockABI returns the kernel's Landlock ABI version, 0 when unavailable.
func LandlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// PreparedLandlock is a plan's Landlock rulesets, made and filled (each
// rule's path opened and added) but not enforced: a process prepares them
// ahead and enforces them just before it executes its program, so that
// only landlock_restrict_self(2) is left for that moment.
type PreparedLandlock struct {
	// Status is what the rulesets enforce once Enforce has run.
	Status LandlockStatus
	layers []rulesetFD
}

// rulesetFD is one ruleset and its landlock_restrict_self(2) flags.
type rulesetFD struct {
	fd    int
	flags uint32
}

// PrepareLandlock makes the rulesets that restrict a process to plan, in
// order, each as go-landlock's Config.RestrictPaths, RestrictNet and
// RestrictScoped would enforce it (Config.NewRulesetFD validates and
// downgrades as those do): first the filesystem (from ABI 9 connecting to
// pathname unix sockets bound outside the domain included), then (ABI 4)
// TCP when plan.RestrictTCP, then (ABI 6) abstract unix sockets and
// signals to its own domain. A nil plan, or a kernel without Landlock,
// prepares none. Below plan.MinABI it returns ErrLandlockTooOld and
// prepares nothing.
func PrepareLandlock(plan *LandlockPlan) (*PreparedLandlock, error) {
	p := &PreparedLandlock{Status: LandlockStatus{ABI: LandlockABI()}}
	st := &p.Status
	if plan == nil {
		return p, nil
	}
	if st.ABI < plan.MinABI {
		return p, fmt.Errorf("%w: kernel has %d, plan needs %d (upgrade the kernel or lower landlock.min_abi)", ErrLandlockTooOld, st.ABI, plan.MinABI)
	}
	if st.ABI == 0 {
		return p, nil
	}
	rules, skipped, err := pathRules(plan.Paths)
	if err != nil {
		return p, err
	}
	st.Skipped = skipped
	cfg := landlockConfig()
	// Each layer handles one kind of right alone, as Config.RestrictPaths,
	// RestrictNet and RestrictScoped each enforce theirs.
	fsCfg := cfg
	fsCfg.HandledAccessNet, fsCfg.Scoped = 0, 0
	if err := p.add(fsCfg, rules); err != nil {
		return p, fmt.Errorf("landlock paths: %w", err)
	}
	st.FS, st.UnixSockets = true, st.ABI >= 9
	if plan.RestrictTCP && st.ABI >= 4 {
		netCfg := cfg
		netCfg.HandledAccessFS, netCfg.Scoped = 0, 0
		if err := p.add(netCfg, netRules(plan)); err != nil {
			return p, fmt.Errorf("landlock tcp: %w", err)
		}
		st.Net = true
	}
	if st.ABI >= 6 {
		scopeCfg := cfg
		scopeCfg.HandledAccessFS, scopeCfg.HandledAccessNet = 0, 0
		if err := p.add(scopeCfg, nil); err != nil {
			return p, fmt.Errorf("landlock scopes: %w", err)
		}
		st.Scoped = true
	}
	return p, nil
}

// add makes one ruleset of c and rules; nothing to restrict adds none.
func (p *PreparedLandlock) add(c landlock.Config, rules []landlock.Rule) error {
	fd, flags, err := c.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd >= 0 {
		p.layers = append(p.layers, rulesetFD{fd: fd, flags: flags})
	}
	return nil
}

// Enforce restricts the calling thread with each ruleset, in order (one
// Landlock domain each), after
// setting no_new_privs on it, and closes them. The caller must hold
// runtime.LockOSThread and never release it: it executes the program from
// this thread next, which leaves the process with this thread alone.
func (p *PreparedLandlock) Enforce() error {
	defer p.Close()
	if len(p.layers) == 0 {
		return nil
	}
	if err := noNewPrivsThisThread(); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	for _, l := range p.layers {
		if err := restrictSelf(l.fd, l.flags); err != nil {
			return fmt.Errorf("landlock_restrict_self: %w", err)
		}
	}
	return nil
}

// Close closes the rulesets (they are close-on-exec besides).
func (p *PreparedLandlock) Close() {
	for _, l := range p.layers {
		_ = closeFD(l.fd)
	}
	p.layers = nil
}

// landlockConfig is the configuration PrepareLandlock restricts with.
//
// V9: no rule grants resolve_unix, so on ABI 9 and later the agent may
// connect only to pathname sockets bound inside its own domain. (V10
// would add UDP to RestrictNet, which the plan does not want.) From ABI 7
// the kernel reports the domains' refusals to the audit log; by default
// only until the process executes another program, which it does next:
// LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON keeps the agent's refusals logged
// (docs/denials.md). Older kernels: omitted.
func landlockConfig() landlock.Config {
	return landlock.V9.BestEffort().EnableLoggingForSubprocesses()
}

// pathRules turns plan paths into rules: directories get directory rights,
// files file rights.
func pathRules(paths []LandlockPath) ([]landlock.Rule, []string, error) {
	var rules []landlock.Rule
	var skipped []string
	for _, p := range paths {
		fi, err := os.Stat(p.Path)
		if err != nil {
			if p.Optional && errors.Is(err, os.ErrNotExist) {
				skipped = append(skipped, p.Path)
				continue
			}
			return nil, nil, fmt.Errorf("landlock path %s: %w", p.Path, err)
		}
		var r landlock.FSRule
		switch {
		case fi.IsDir() && p.Write:
			r = landlock.RWDirs(p.Path)
		case fi.IsDir():
			r = landlock.RODirs(p.Path)
		case p.Write:
			r = landlock.RWFiles(p.Path)
		default:
			r = landlock.ROFiles(p.Path)
		}
		if p.IoctlDev {
			r = r.WithIoctlDev()
		}
		rules = append(rules, r)
	}
	return rules, skipped, nil
}

func netRules(plan *LandlockPlan) []landlock.Rule {
	var rules []landlock.Rule
	for _, p := range plan.ConnectTCP {
		rules = append(rules, landlock.ConnectTCP(p))
	}
	for _, p := range plan.BindTCP {
		rules = append(rules, landlock.BindTCP(p))
	}
	return rules
}
