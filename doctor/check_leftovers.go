package doctor

import "fmt"

// LeftoverFacts is what earlier agentbox builds left on this host where
// nothing on the host sees it, and teardown's proof did not look: the
// cgroup directories that crun made below a hybrid host's cgroup2 mount
// (launcher.CountHiddenCgroups).
type LeftoverFacts struct {
	// Looked is whether the host was examined; Why says why there is
	// nothing to examine (not a hybrid cgroup host), Err why it could not
	// be (not root).
	Looked bool   `json:"looked"`
	Why    string `json:"why,omitempty"`
	// HiddenCgroups counts the run directories found there whose run is
	// gone: what `agentbox gc` removes.
	HiddenCgroups int    `json:"hidden_cgroups"`
	Err           string `json:"err,omitempty"`
}

// LeftoversFunc looks for what earlier builds left (Options.Leftovers):
// the number of hidden cgroup directories of runs that are gone; or why
// nothing can be there (why), or why it cannot look (err).
type LeftoversFunc func() (hidden int, why string, err error)

func gatherLeftovers(fn LeftoversFunc) LeftoverFacts {
	if fn == nil {
		return LeftoverFacts{Err: "no look for leftovers is wired into doctor in this build"}
	}
	n, why, err := fn()
	f := LeftoverFacts{Looked: why == "" && err == nil, Why: why, HiddenCgroups: n}
	if err != nil {
		f.Err = err.Error()
	}
	return f
}

// checkLeftovers is host hygiene: leftovers weaken no boundary, so the
// result never blocks.
func checkLeftovers(f *Facts) []Result {
	l := f.Leftovers
	r := Result{ID: "leftovers"}
	switch {
	case !l.Looked && l.Why == "" && l.Err == "":
		r.Status, r.Detail, r.Fix = Unknown, "not looked for (these facts were gathered without that look)", "sudo agentbox doctor"
	case l.Err != "":
		r.Status, r.Detail, r.Fix = Unknown, "cannot look below the host's cgroup2 mount: "+l.Err, "sudo agentbox doctor"
	case !l.Looked:
		r.Status, r.Detail = Pass, "nothing to look for: "+l.Why
	case l.HiddenCgroups > 0:
		r.Status = Warn
		r.Detail = fmt.Sprintf("%d cgroup director(ies) that crun made for runs of agentbox builds before 2026-12-02 remain on the host's /sys/fs/cgroup tmpfs, below its cgroup2 mount, where nothing on the host sees them (one per crun launch of those builds)", l.HiddenCgroups)
		r.Fix = "agentbox gc (as root)"
	default:
		r.Status, r.Detail = Pass, "no run's cgroup directory remains below the host's cgroup2 mount"
	}
	return []Result{r}
}
