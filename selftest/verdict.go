package selftest

import "slices"

// Excuses are what may excuse a result that did not get its expected
// decision, each recorded by the launcher as a residual.
type Excuses struct {
	// AllowUnknown are the probes whose UNKNOWN the user accepts
	// (--allow-unknown PROBE=reason), with the reasons; an ALLOW of one of
	// them still fails.
	AllowUnknown map[string]string
	// Residual are the probes and host checks that a recorded residual of
	// the plan makes report ALLOW (policy.Residual.Probes, for instance
	// init sharing the agent's uid where the sandbox has one id); an
	// UNKNOWN of one of them still fails.
	Residual []string
}

// Verdict is the judgement of a sandbox's results: what refuses the
// launch (or fails a self-test), and how many ALLOWs only a residual
// excuses.
type Verdict struct {
	// Failed are the results that did not get their expected decision and
	// that no excuse covers, in the order given.
	Failed []Result
	// ResidualAllowed counts the results that are ALLOW where DENY was
	// expected, excused by a residual that names them.
	ResidualAllowed int
}

// Judge is the one verdict over a sandbox's probe and host-check results:
// a result passes when its decision is the one expected; otherwise an
// UNKNOWN of a probe the user accepts, or an ALLOW that a residual names,
// is excused; anything else fails. UNKNOWN fails by default (fail closed,
// DESIGN.md §2).
func Judge(results []Result, ex Excuses) Verdict {
	var v Verdict
	for _, r := range results {
		switch {
		case r.Passed():
		case r.Decision == Unknown && accepted(ex.AllowUnknown, r.Probe):
		case r.Decision == Allow && slices.Contains(ex.Residual, r.Probe):
			v.ResidualAllowed++
		default:
			v.Failed = append(v.Failed, r)
		}
	}
	return v
}

func accepted(allow map[string]string, probe string) bool {
	_, ok := allow[probe]
	return ok
}
