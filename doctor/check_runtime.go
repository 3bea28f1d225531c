package doctor

import (
	"fmt"
	"strings"
)

// checkRuntimes reports which runtimes are installed and whether the
// default one is.
func checkRuntimes(f *Facts) []Result {
	var out []Result
	names := []string{}
	for _, rt := range f.Runtimes {
		names = append(names, rt.Name)
		out = append(out, Result{ID: "runtime-" + rt.Name, Status: Pass, Layer: LayerRuntime, Detail: describeRuntime(rt)})
	}
	switch {
	case len(names) == 0:
		out = append(out, Result{
			ID: "runtime-" + defaultRuntime, Status: Fail, Layer: LayerRuntime,
			Detail: "no OCI runtime found on PATH (runc, crun or runsc): agentbox cannot start a sandbox",
			Fix:    installCommand(f.OS, defaultRuntime),
		})
	case !contains(names, defaultRuntime):
		out = append(out, Result{
			ID: "runtime-" + defaultRuntime, Status: Warn, Layer: LayerRuntime,
			Detail: fmt.Sprintf("runc, the default runtime, is not installed; %s is: runs need runtime: %s in agentbox.yaml (or --runtime %s)", names[0], names[0], names[0]),
			Fix:    installCommand(f.OS, defaultRuntime),
		})
	}
	return out
}

func describeRuntime(rt RuntimeFacts) string {
	v := rt.Version
	if v == "" {
		v = "(version unknown: " + rt.VersionErr + ")"
	}
	s := fmt.Sprintf("%s %s at %s", rt.Name, v, rt.Path)
	if rt.Package != nil {
		s += fmt.Sprintf(", from package %s %s (%s)", rt.Package.Name, rt.Package.Version, rt.Package.Manager)
	} else {
		s += ", not from a package"
	}
	if rt.Name == "runsc" {
		s += "; doctor's CVE table has no runsc entries"
	}
	return s
}

// installCommand is the line that installs a package on this distribution.
func installCommand(os OSRelease, pkg string) string {
	switch os.ID {
	case "debian", "ubuntu":
		return "apt-get install " + pkg
	case "fedora", "rhel", "centos", "rocky", "almalinux":
		return "dnf install " + pkg
	}
	return "install " + pkg + " with your distribution's package manager"
}

// checkRuntimeCVEs judges every installed runtime against every entry of
// the CVE table for it.
func checkRuntimeCVEs(f *Facts) []Result {
	t, err := RuntimeCVEs()
	if err != nil {
		return []Result{{ID: "runtime-cves", Status: Unknown, Layer: LayerRuntime, Detail: "cannot read doctor's CVE table: " + err.Error(), Fix: "rebuild agentbox from a clean checkout"}}
	}
	var out []Result
	for _, rt := range f.Runtimes {
		for _, e := range t.Entries {
			if e.Runtime == rt.Name {
				out = append(out, judgeCVE(e, rt, f.OS, t.Checked))
			}
		}
	}
	return out
}

// judgeCVE decides one entry for one runtime: by the upstream version when
// it settles the question, else by the distribution's package data, else
// FAIL for a binary no package owns and UNKNOWN for a package the table has
// no data on (it may carry a backport).
func judgeCVE(e CVEEntry, rt RuntimeFacts, os OSRelease, checked string) Result {
	r := Result{ID: rt.Name + "-" + e.ID, Layer: LayerRuntime}
	up := rt.Version
	if rt.Package != nil {
		up = packageUpstream(rt.Package.Version)
	}
	v, ok := parseUpstream(up)
	switch {
	case !ok:
		return undetermined(e, r, fmt.Sprintf("cannot read %s's version (%q)", rt.Name, up), fmt.Sprintf("%s --version", rt.Path))
	case e.Introduced != "" && compareUpstream(v, mustParse(e.Introduced)) < 0:
		r.Status, r.Detail = Pass, fmt.Sprintf("not affected: %s %s predates %s, where %s came in", rt.Name, up, e.Introduced, e.ID)
		return r
	case fixedUpstream(v, e.Fixed):
		r.Status, r.Detail = Pass, fmt.Sprintf("%s %s includes the upstream fix (%s)", rt.Name, up, strings.Join(e.Fixed, ", "))
		return r
	case rt.Package != nil:
		return judgePackage(e, r, rt, os, checked)
	}
	return vulnerable(e, r, fmt.Sprintf("%s at %s is %s, not from a package, and predates the fix (%s): %s — %s",
		rt.Name, rt.Path, up, strings.Join(e.Fixed, ", "), e.Summary, e.Sources[0]), upstreamFix(e, rt.Name))
}

func mustParse(s string) upstreamVersion {
	v, _ := parseUpstream(s) // validated when the table loads
	return v
}

// judgePackage decides a packaged runtime whose upstream version predates
// the fix, from the distribution's data.
func judgePackage(e CVEEntry, r Result, rt RuntimeFacts, os OSRelease, checked string) Result {
	pkg := rt.Package
	d, ok := e.distro(os, pkg.Name)
	switch {
	case ok && d.Fixed != "" && comparePackage(pkg.Manager, pkg.Version, d.Fixed) >= 0:
		r.Status, r.Detail = Pass, fmt.Sprintf("patched: package %s %s carries %s's backported fix (fixed in %s — %s)", pkg.Name, pkg.Version, osName(os), d.Fixed, d.Source)
		return r
	case ok && d.Fixed != "":
		return vulnerable(e, r, fmt.Sprintf("package %s %s predates %s's fix %s: %s — %s", pkg.Name, pkg.Version, osName(os), d.Fixed, e.Summary, d.Source), upgradeCommand(pkg))
	case ok && comparePackage(pkg.Manager, pkg.Version, d.UnfixedThrough) <= 0:
		return vulnerable(e, r, fmt.Sprintf("package %s %s lacks the fix and %s has released none (as of %s: %s): %s — %s",
			pkg.Name, pkg.Version, osName(os), checked, d.Note, e.Summary, d.Source), upstreamFix(e, rt.Name))
	}
	return undetermined(e, r, fmt.Sprintf("package %s %s: its upstream version predates the fix (%s), and doctor's table (checked %s) does not know whether %s backported it",
		pkg.Name, pkg.Version, strings.Join(e.Fixed, ", "), checked, osName(os)), howToCheck(os, pkg, e))
}

// vulnerable is FAIL, or WARN for a low-severity or hardening entry.
func vulnerable(e CVEEntry, r Result, detail, fix string) Result {
	r.Status, r.Detail, r.Fix = Fail, detail, fix
	if e.soft() {
		r.Status = Warn
		r.Detail = e.Severity + " severity: " + detail
	}
	return r
}

// undetermined is UNKNOWN (blocking), or WARN for a low-severity or
// hardening entry, which could not have blocked either way.
func undetermined(e CVEEntry, r Result, detail, fix string) Result {
	r.Status, r.Detail, r.Fix = Unknown, detail, fix
	if e.soft() {
		r.Status = Warn
		r.Detail = e.Severity + " severity, undetermined: " + detail
	}
	return r
}

func osName(os OSRelease) string {
	if os.ID == "" {
		return "this distribution"
	}
	return strings.TrimSpace(os.ID + " " + os.VersionID)
}

func upgradeCommand(pkg *Package) string {
	if pkg.Manager == "rpm" {
		return "dnf upgrade " + pkg.Name
	}
	return "apt-get update && apt-get install --only-upgrade " + pkg.Name
}

// upstreamFix names the releases to install when no distribution fix exists.
func upstreamFix(e CVEEntry, name string) string {
	releases := map[string]string{"runc": "https://github.com/opencontainers/runc/releases", "crun": "https://github.com/containers/crun/releases"}
	return fmt.Sprintf("replace %s with release %s or later of its branch (%s), or use another runtime that passes (runtime: in agentbox.yaml)",
		name, strings.Join(e.Fixed, ", "), releases[name])
}

// howToCheck is the command or page that settles whether a package has a
// backport.
func howToCheck(os OSRelease, pkg *Package, e CVEEntry) string {
	switch {
	case !strings.HasPrefix(e.ID, "CVE-"):
		return fmt.Sprintf("compare package %s %s with %s", pkg.Name, pkg.Version, e.Sources[len(e.Sources)-1])
	case pkg.Manager == "rpm":
		return fmt.Sprintf("rpm -q --changelog %s | grep %s (and your distribution's advisory for it)", pkg.Name, e.ID)
	case os.ID == "ubuntu":
		return fmt.Sprintf("zgrep %s /usr/share/doc/%s/changelog.Debian.gz; see https://ubuntu.com/security/%s", e.ID, pkg.Name, e.ID)
	case os.ID == "debian":
		return fmt.Sprintf("zgrep %s /usr/share/doc/%s/changelog.Debian.gz; see https://security-tracker.debian.org/tracker/%s", e.ID, pkg.Name, e.ID)
	}
	return fmt.Sprintf("zgrep %s /usr/share/doc/%s/changelog.Debian.gz, or ask your distribution", e.ID, pkg.Name)
}
