package advisory

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:embed advisories.json
var tableJSON []byte

// Table is the data runtimes are judged by (advisories.json): every entry
// with its fixed releases, the distributions' backports, what an attack
// needs of the launch, and sources.
type Table struct {
	// Checked is the date the table was last checked against its sources.
	Checked string  `json:"checked"`
	About   string  `json:"about"`
	Entries []Entry `json:"entries"`
}

// Entry is one known vulnerability of one runtime.
type Entry struct {
	Runtime string `json:"runtime"`
	// ID is the CVE, or a name for a fix without one.
	ID string `json:"id"`
	// Severity is "high", "medium", "unrated", "low" or "hardening"; low
	// and hardening entries are residuals, the rest refuse where exposed.
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	// Introduced is the first affected release ("": every release).
	Introduced string `json:"introduced,omitempty"`
	// Fixed is the first fixed release of each maintained branch.
	Fixed []string `json:"fixed"`
	// Needs are the launch conditions the attack needs, all of them; an
	// entry without needs is exposed in every launch.
	Needs []Condition `json:"needs,omitempty"`
	// Attack says in words what the attack needs.
	Attack  string      `json:"attack"`
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

// Key names an entry for one runtime: "runc-CVE-2025-31133". Doctor's
// check, the finding's subject and an acceptance's subject all use it.
func (e Entry) Key() string { return e.Runtime + "-" + e.ID }

// Soft reports whether the entry only ever warns: low severity or
// hardening.
func (e Entry) Soft() bool { return e.Severity == "low" || e.Severity == "hardening" }

// distro returns the entry's data for a package of one distribution release.
func (e Entry) distro(d Distro, pkg string) (DistroFix, bool) {
	for _, x := range e.Distros {
		if x.OS == d.ID && x.VersionID == d.VersionID && x.Package == pkg {
			return x, true
		}
	}
	return DistroFix{}, false
}

var loadTable = sync.OnceValues(func() (Table, error) {
	var t Table
	if err := json.Unmarshal(tableJSON, &t); err != nil {
		return t, fmt.Errorf("advisories.json: %w", err)
	}
	return t, t.validate()
})

// Load returns the embedded table, validated.
func Load() (Table, error) { return loadTable() }

var severities = map[string]bool{"high": true, "medium": true, "unrated": true, "low": true, "hardening": true}

// validate checks every version, severity and condition in the table, so
// that a typo cannot turn into a silent pass.
func (t Table) validate() error {
	for _, e := range t.Entries {
		if e.Runtime == "" || e.ID == "" || len(e.Fixed) == 0 || len(e.Sources) == 0 || e.Attack == "" {
			return fmt.Errorf("advisories.json: entry %s lacks runtime, id, fixed, attack or sources", e.Key())
		}
		if !severities[e.Severity] {
			return fmt.Errorf("advisories.json: %s: unknown severity %q", e.Key(), e.Severity)
		}
		for _, v := range append([]string{e.Introduced}, e.Fixed...) {
			if _, ok := parseUpstream(v); v != "" && !ok {
				return fmt.Errorf("advisories.json: %s: bad version %q", e.Key(), v)
			}
		}
		for _, c := range e.Needs {
			if _, ok := conditions[c]; !ok {
				return fmt.Errorf("advisories.json: %s: unknown condition %q in needs", e.Key(), c)
			}
		}
		for _, d := range e.Distros {
			if (d.Fixed == "") == (d.UnfixedThrough == "") || d.Source == "" {
				return fmt.Errorf("advisories.json: %s: distro %s %s needs exactly one of fixed and unfixed_through, and a source", e.Key(), d.OS, d.VersionID)
			}
		}
	}
	return nil
}

// ForRuntime returns the entries about one runtime, in table order.
func (t Table) ForRuntime(name string) []Entry {
	var out []Entry
	for _, e := range t.Entries {
		if e.Runtime == name {
			out = append(out, e)
		}
	}
	return out
}
