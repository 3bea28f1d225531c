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

// ApplyLandlock restricts the calling process, all its threads and its
// future children to plan: first the filesystem (from ABI 9 connecting to
// pathname unix sockets bound outside the domain included), then (ABI 4)
// TCP when plan.RestrictTCP, then (ABI 6) abstract unix sockets and signals
// to its own domain. It sets no_new_privs, which Landlock requires. A nil plan applies
// nothing. Below plan.MinABI it returns ErrLandlockTooOld and applies nothing.
func ApplyLandlock(plan *LandlockPlan) (LandlockStatus, error) {
	st := LandlockStatus{ABI: LandlockABI()}
	if plan == nil {
		return st, nil
	}
	if st.ABI < plan.MinABI {
		return st, fmt.Errorf("%w: kernel has %d, plan needs %d (upgrade the kernel or lower landlock.min_abi)", ErrLandlockTooOld, st.ABI, plan.MinABI)
	}
	if st.ABI == 0 {
		return st, nil
	}
	rules, skipped, err := pathRules(plan.Paths)
	if err != nil {
		return st, err
	}
	st.Skipped = skipped
	// V9: no rule grants resolve_unix, so on ABI 9 and later the agent
	// may connect only to pathname sockets bound inside its own domain.
	// (V10 would add UDP to RestrictNet, which the plan does not want.)
	// From ABI 7 the kernel reports the domains' refusals to the audit
	// log; by default only until the process executes another program,
	// which it does next: LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON keeps the
	// agent's refusals logged (docs/denials.md). Older kernels: omitted.
	cfg := landlock.V9.BestEffort().EnableLoggingForSubprocesses()
	if err := cfg.RestrictPaths(rules...); err != nil {
		return st, fmt.Errorf("landlock paths: %w", err)
	}
	st.FS, st.UnixSockets = true, st.ABI >= 9
	if plan.RestrictTCP && st.ABI >= 4 {
		if err := cfg.RestrictNet(netRules(plan)...); err != nil {
			return st, fmt.Errorf("landlock tcp: %w", err)
		}
		st.Net = true
	}
	if st.ABI >= 6 {
		if err := cfg.RestrictScoped(); err != nil {
			return st, fmt.Errorf("landlock scopes: %w", err)
		}
		st.Scoped = true
	}
	return st, nil
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
