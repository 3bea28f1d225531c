package advisory

import (
	"fmt"
	"strings"
)

// Runtime is one installed OCI runtime, as read from the host.
type Runtime struct {
	Name string `json:"name"` // runc, crun, runsc
	Path string `json:"path"`
	// Version is the upstream version the binary reports ("1.1.5+ds1");
	// "" when it could not be read.
	Version string `json:"version"`
	// Package is the package that installed the binary; nil when none
	// owns it.
	Package *Package `json:"package,omitempty"`
}

// Package is an installed distribution package.
type Package struct {
	Manager string `json:"manager"` // "dpkg" or "rpm"
	Name    string `json:"name"`
	Version string `json:"version"` // as the manager prints it, epoch included
}

// Distro is the distribution release a packaged runtime comes from
// (os-release ID and VERSION_ID).
type Distro struct {
	ID        string `json:"id"`
	VersionID string `json:"version_id"`
}

// Verdict is the judgement of one entry for one runtime in one mode.
type Verdict string

// The verdicts. Only Exposed and Undetermined can block (Finding.Blocks).
const (
	// NotAffected: the version predates the flaw.
	NotAffected Verdict = "not-affected"
	// Fixed: the version, or the package's backport, has the fix.
	Fixed Verdict = "fixed"
	// NotExposed: the version has the flaw (or may have it), but the mode
	// lacks a condition the attack needs.
	NotExposed Verdict = "affected-not-exposed"
	// Exposed: the version has the flaw and the mode has every condition
	// the attack needs.
	Exposed Verdict = "affected-exposed"
	// Undetermined: the mode is exposed, and whether the version has the
	// fix cannot be told (an unreadable version, or a package the table has
	// no data on).
	Undetermined Verdict = "undetermined"
)

// Finding is the judgement of one entry.
type Finding struct {
	// Key is "runc-CVE-2025-31133" (Entry.Key): doctor's check id, the
	// subject of a runtime-vulnerable finding, and the residual code of a
	// finding that does not refuse the launch (Residual).
	Key      string  `json:"key"`
	Runtime  string  `json:"runtime"`
	ID       string  `json:"id"`
	Severity string  `json:"severity"`
	Summary  string  `json:"summary"`
	Mode     string  `json:"mode"` // Mode.Name
	Verdict  Verdict `json:"verdict"`
	// Unsure is true when the version may or may not have the fix (with
	// NotExposed or Undetermined).
	Unsure bool `json:"unsure,omitempty"`
	// Detail says what the version facts are, in words.
	Detail string `json:"detail"`
	// Exposure says why the mode is not exposed, or that it is.
	Exposure string `json:"exposure,omitempty"`
	// Fix is the exact change that fixes the entry: the package upgrade or
	// upstream release to install, or the command that settles an
	// undetermined version. Empty when not affected or fixed.
	Fix string `json:"fix,omitempty"`
	// Source is the advisory, or the distribution's page the detail cites.
	Source string `json:"source"`
	soft   bool
}

// Soft reports whether the entry is low severity or hardening: exposed, it
// is a residual, never a refusal.
func (f Finding) Soft() bool { return f.soft }

// Blocks reports whether the finding alone refuses the launch (doctor:
// fails the runtime layer for this mode): exposed or undetermined, and not
// soft.
func (f Finding) Blocks() bool {
	return (f.Verdict == Exposed || f.Verdict == Undetermined) && !f.soft
}

// Residual reports whether the finding is a residual of the launch: affected
// but not exposed, or exposed but soft.
func (f Finding) Residual() bool {
	return f.Verdict == NotExposed || f.soft && (f.Verdict == Exposed || f.Verdict == Undetermined)
}

// Line is the finding in one line: the key, then Reason.
func (f Finding) Line() string { return f.Key + ": " + f.Reason() }

// Reason is the verdict with the severity, the version facts and the
// exposure: "affected-not-exposed (high severity): package runc … lacks the
// fix …; not exposed in the default mode: …".
func (f Finding) Reason() string {
	s := fmt.Sprintf("%s (%s severity): %s", f.Verdict, f.Severity, f.Detail)
	if f.Exposure != "" {
		s += "; " + f.Exposure
	}
	return s
}

// Judge decides every entry of t about rt for a launch in mode m, in table
// order. It reads nothing but its arguments.
func Judge(t Table, rt Runtime, d Distro, m Mode) []Finding {
	var out []Finding
	for _, e := range t.ForRuntime(rt.Name) {
		out = append(out, judge(e, rt, d, m, t.Checked))
	}
	return out
}

// judge decides one entry: first whether the version has the flaw, then
// whether the mode exposes it.
func judge(e Entry, rt Runtime, d Distro, m Mode, checked string) Finding {
	f := Finding{Key: e.Key(), Runtime: e.Runtime, ID: e.ID, Severity: e.Severity, Summary: e.Summary, Mode: m.Name(), Source: e.Sources[0], soft: e.Soft()}
	v := judgeVersion(e, rt, d, checked)
	f.Detail, f.Fix, f.Unsure = v.detail, v.fix, v.state == unknown
	if v.source != "" {
		f.Source = v.source
	}
	switch v.state {
	case notAffected:
		f.Verdict = NotAffected
		return f
	case fixed:
		f.Verdict = Fixed
		return f
	case affected, unknown: // decided by the mode, below
	}
	exposed, why := exposure(e, m)
	switch {
	case !exposed:
		f.Verdict, f.Exposure = NotExposed, "not exposed in the "+m.Name()+" mode: "+why
	case v.state == unknown:
		f.Verdict, f.Exposure = Undetermined, "exposed in the "+m.Name()+" mode"
	default:
		f.Verdict, f.Exposure = Exposed, "exposed in the "+m.Name()+" mode"
	}
	return f
}

// state is what the version facts say about one entry.
type state int

const (
	affected state = iota
	notAffected
	fixed
	unknown
)

// versionJudgement is state with its words: the detail, the fix and the
// source the detail cites ("" for the entry's own).
type versionJudgement struct {
	state  state
	detail string
	fix    string
	source string
}

// judgeVersion decides one entry for one runtime: by the upstream version
// when it settles the question, else by the distribution's package data,
// else affected for a binary no package owns and unknown for a package the
// table has no data on (it may carry a backport).
func judgeVersion(e Entry, rt Runtime, d Distro, checked string) versionJudgement {
	up := rt.Version
	if rt.Package != nil {
		up = packageUpstream(rt.Package.Version)
	}
	v, ok := parseUpstream(up)
	switch {
	case !ok:
		return versionJudgement{unknown, fmt.Sprintf("cannot read %s's version (%q)", rt.Name, up), fmt.Sprintf("%s --version", orName(rt.Path, rt.Name)), ""}
	case e.Introduced != "" && compareUpstream(v, mustParse(e.Introduced)) < 0:
		return versionJudgement{state: notAffected, detail: fmt.Sprintf("not affected: %s %s predates %s, where %s came in", rt.Name, up, e.Introduced, e.ID)}
	case fixedUpstream(v, e.Fixed):
		return versionJudgement{state: fixed, detail: fmt.Sprintf("%s %s includes the upstream fix (%s)", rt.Name, up, strings.Join(e.Fixed, ", "))}
	case rt.Package != nil:
		return judgePackage(e, rt, d, checked)
	}
	return versionJudgement{affected, fmt.Sprintf("%s at %s is %s, not from a package, and predates the fix (%s): %s",
		rt.Name, rt.Path, up, strings.Join(e.Fixed, ", "), e.Summary), upstreamFix(e), ""}
}

func orName(path, name string) string {
	if path == "" {
		return name
	}
	return path
}

func mustParse(s string) upstreamVersion {
	v, _ := parseUpstream(s) // validated when the table loads
	return v
}

// judgePackage decides a packaged runtime whose upstream version predates
// the fix, from the distribution's data.
func judgePackage(e Entry, rt Runtime, d Distro, checked string) versionJudgement {
	pkg := rt.Package
	x, ok := e.distro(d, pkg.Name)
	switch {
	case ok && x.Fixed != "" && comparePackage(pkg.Manager, pkg.Version, x.Fixed) >= 0:
		return versionJudgement{state: fixed, detail: fmt.Sprintf("patched: package %s %s carries %s's backported fix (fixed in %s)", pkg.Name, pkg.Version, distroName(d), x.Fixed), source: x.Source}
	case ok && x.Fixed != "":
		return versionJudgement{affected, fmt.Sprintf("package %s %s predates %s's fix %s: %s", pkg.Name, pkg.Version, distroName(d), x.Fixed, e.Summary), upgradeCommand(pkg, x.Fixed), x.Source}
	case ok && comparePackage(pkg.Manager, pkg.Version, x.UnfixedThrough) <= 0:
		return versionJudgement{affected, fmt.Sprintf("package %s %s lacks the fix and %s has released none (as of %s: %s): %s",
			pkg.Name, pkg.Version, distroName(d), checked, x.Note, e.Summary), upstreamFix(e), x.Source}
	}
	return versionJudgement{unknown, fmt.Sprintf("package %s %s: its upstream version predates the fix (%s), and the advisory table (checked %s) does not know whether %s backported it",
		pkg.Name, pkg.Version, strings.Join(e.Fixed, ", "), checked, distroName(d)), howToCheck(d, pkg, e), ""}
}

func distroName(d Distro) string {
	if d.ID == "" {
		return "this distribution"
	}
	return strings.TrimSpace(d.ID + " " + d.VersionID)
}
