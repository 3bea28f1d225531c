// Package ctrversion reads and gates a containerd daemon's version: the
// engine/containerd engine refuses a daemon older than MinVersion, and
// doctor judges the daemon it finds with the same Gate, without linking
// the containerd client (README, "Three binaries").
package ctrversion

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultAddress is containerd's own socket, which --address overrides;
// here so that the launch binary, which links no client, knows it too.
const DefaultAddress = "/run/containerd/containerd.sock"

// MinVersion is the oldest containerd the engine drives: 1.6 has every
// call it makes (containers, tasks with the runc v2 shim and its options,
// namespaces, version). Older daemons are refused.
var MinVersion = Version{1, 6, 0}

// Tested are the daemon releases that make test runs the containerd engine
// against: Debian 12's containerd, and the 1.7 and 2.x daemons that
// scripts/containerd-build.sh builds from tools/containerd (whose go.mod
// files a test holds this list to). docs/containerd.md, "Versions".
var Tested = []Version{{1, 6, 20}, {1, 7, 35}, {2, 4, 2}}

// Version is a containerd release, major.minor.patch.
type Version [3]int

// ParseVersion reads a daemon's version string: "1.6.20~ds1" (Debian),
// "v1.7.24", "2.0.0-rc.1", "1.7.2+unknown". What follows the patch number
// is ignored.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	var v Version
	parts := strings.SplitN(t, ".", 3)
	if len(parts) < 2 {
		return v, fmt.Errorf("containerd version %q: want major.minor[.patch]", s)
	}
	for i, p := range parts {
		end := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' })
		if end == 0 || (end > 0 && i < len(parts)-1) {
			return v, fmt.Errorf("containerd version %q: %q is not a number", s, p)
		}
		if end > 0 {
			p = p[:end]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, fmt.Errorf("containerd version %q: %w", s, err)
		}
		v[i] = n
	}
	return v, nil
}

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// Gate decides whether the engine drives a daemon of version s: nil, or an
// error that says what is missing and what to do.
func Gate(s string) error {
	v, err := ParseVersion(s)
	if err != nil {
		return fmt.Errorf("%w; agentbox cannot tell whether this daemon has what it needs", err)
	}
	if v.Less(MinVersion) {
		return fmt.Errorf("containerd %s is older than %s, the first release whose runc v2 shim takes a runtime binary and state directory per container (runc options BinaryName and Root) as agentbox needs; upgrade containerd (Debian 12: apt-get install containerd), or use --engine runtime", v, MinVersion)
	}
	return nil
}

// Untested says, for a daemon the Gate accepts, whether its release line
// (major.minor) is one that the tests run against: "" when it is, or a
// note that names the tested ones. An untested line is not refused: the
// engine makes only calls that every release since MinVersion has.
func Untested(s string) string {
	v, err := ParseVersion(s)
	if err != nil || v.Less(MinVersion) {
		return ""
	}
	var lines []string
	for _, t := range Tested {
		if t[0] == v[0] && t[1] == v[1] {
			return ""
		}
		lines = append(lines, t.String())
	}
	return fmt.Sprintf("containerd %d.%d is not a release line agentbox's tests run against (%s); the engine makes only calls that containerd has had since %s", v[0], v[1], strings.Join(lines, ", "), MinVersion)
}
