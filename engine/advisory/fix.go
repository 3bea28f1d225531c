package advisory

import (
	"fmt"
	"strings"
)

// releases are where each runtime publishes its releases.
var releases = map[string]string{
	"runc": "https://github.com/opencontainers/runc/releases",
	"crun": "https://github.com/containers/crun/releases",
}

// upgradeCommand installs the distribution's fixed package.
func upgradeCommand(pkg *Package, fixed string) string {
	if pkg.Manager == "rpm" {
		return fmt.Sprintf("upgrade package %s to %s or later: dnf upgrade %s", pkg.Name, fixed, pkg.Name)
	}
	return fmt.Sprintf("upgrade package %s to %s or later: apt-get update && apt-get install --only-upgrade %s", pkg.Name, fixed, pkg.Name)
}

// upstreamFix names the releases to install when no distribution fix exists.
func upstreamFix(e Entry) string {
	return fmt.Sprintf("replace %s with release %s or later of its branch (%s), or use another runtime that passes (runtime: in agentbox.yaml)",
		e.Runtime, strings.Join(e.Fixed, ", "), releases[e.Runtime])
}

// howToCheck is the command or page that settles whether a package has a
// backport.
func howToCheck(d Distro, pkg *Package, e Entry) string {
	switch {
	case !strings.HasPrefix(e.ID, "CVE-"):
		return fmt.Sprintf("compare package %s %s with %s", pkg.Name, pkg.Version, e.Sources[len(e.Sources)-1])
	case pkg.Manager == "rpm":
		return fmt.Sprintf("rpm -q --changelog %s | grep %s (and your distribution's advisory for it)", pkg.Name, e.ID)
	case d.ID == "ubuntu":
		return fmt.Sprintf("zgrep %s /usr/share/doc/%s/changelog.Debian.gz; see https://ubuntu.com/security/%s", e.ID, pkg.Name, e.ID)
	case d.ID == "debian":
		return fmt.Sprintf("zgrep %s /usr/share/doc/%s/changelog.Debian.gz; see https://security-tracker.debian.org/tracker/%s", e.ID, pkg.Name, e.ID)
	}
	return fmt.Sprintf("zgrep %s /usr/share/doc/%s/changelog.Debian.gz, or ask your distribution", e.ID, pkg.Name)
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
