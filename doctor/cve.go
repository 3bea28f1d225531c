package doctor

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:embed runtime_cves.json
var cveJSON []byte

// CVETable is the data doctor judges runtimes by (runtime_cves.json): every
// entry with its fixed releases, the distributions' backports and sources.
type CVETable struct {
	// Checked is the date the table was last checked against its sources.
	Checked string     `json:"checked"`
	About   string     `json:"about"`
	Entries []CVEEntry `json:"entries"`
}

// CVEEntry is one known vulnerability of one runtime.
type CVEEntry struct {
	Runtime string `json:"runtime"`
	// ID is the CVE, or a name for a fix without one.
	ID string `json:"id"`
	// Severity is "high", "medium", "unrated", "low" or "hardening"; low
	// and hardening entries warn, the rest fail.
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	// Introduced is the first affected release ("": every release).
	Introduced string `json:"introduced,omitempty"`
	// Fixed is the first fixed release of each maintained branch.
	Fixed   []string    `json:"fixed"`
	Sources []string    `json:"sources"`
	Distros []DistroFix `json:"distros,omitempty"`
}

// DistroFix is what one distribution release did about an entry: the first
// package version with the fix, or the last one known without it.
type DistroFix struct {
	OS             string `json:"os"`         // os-release ID
	VersionID      string `json:"version_id"` // os-release VERSION_ID
	Package        string `json:"package"`
	Fixed          string `json:"fixed,omitempty"`
	UnfixedThrough string `json:"unfixed_through,omitempty"`
	Source         string `json:"source"`
	Note           string `json:"note,omitempty"`
}

// soft reports whether a match only warns.
func (e CVEEntry) soft() bool { return e.Severity == "low" || e.Severity == "hardening" }

// distro returns the entry's data for a package of one distribution release.
func (e CVEEntry) distro(os OSRelease, pkg string) (DistroFix, bool) {
	for _, d := range e.Distros {
		if d.OS == os.ID && d.VersionID == os.VersionID && d.Package == pkg {
			return d, true
		}
	}
	return DistroFix{}, false
}

var loadCVEs = sync.OnceValues(func() (CVETable, error) {
	var t CVETable
	if err := json.Unmarshal(cveJSON, &t); err != nil {
		return t, fmt.Errorf("runtime_cves.json: %w", err)
	}
	return t, t.validate()
})

// RuntimeCVEs returns the embedded CVE table.
func RuntimeCVEs() (CVETable, error) { return loadCVEs() }

// validate checks that every version in the table parses, so a typo
// cannot turn into a silent PASS.
func (t CVETable) validate() error {
	for _, e := range t.Entries {
		if e.Runtime == "" || e.ID == "" || len(e.Fixed) == 0 || len(e.Sources) == 0 {
			return fmt.Errorf("runtime_cves.json: entry %s/%s lacks runtime, id, fixed or sources", e.Runtime, e.ID)
		}
		for _, v := range append([]string{e.Introduced}, e.Fixed...) {
			if _, ok := parseUpstream(v); v != "" && !ok {
				return fmt.Errorf("runtime_cves.json: %s/%s: bad version %q", e.Runtime, e.ID, v)
			}
		}
		for _, d := range e.Distros {
			if (d.Fixed == "") == (d.UnfixedThrough == "") || d.Source == "" {
				return fmt.Errorf("runtime_cves.json: %s/%s: distro %s %s needs exactly one of fixed and unfixed_through, and a source", e.Runtime, e.ID, d.OS, d.VersionID)
			}
		}
	}
	return nil
}

// branch is a version's major.minor.
func branch(v upstreamVersion) upstreamVersion {
	return upstreamVersion{nums: []int{at(v.nums, 0), at(v.nums, 1)}}
}

// fixedUpstream reports whether v has the fix: it is at or past the fixed
// release of its own branch, or on a branch newer than every fixed one.
func fixedUpstream(v upstreamVersion, fixed []string) bool {
	newest := upstreamVersion{}
	for _, s := range fixed {
		f, _ := parseUpstream(s)
		if compareUpstream(branch(f), branch(v)) == 0 {
			return compareUpstream(v, f) >= 0
		}
		if compareUpstream(branch(f), newest) > 0 {
			newest = branch(f)
		}
	}
	return compareUpstream(branch(v), newest) > 0
}
