// Package ctrversion reads and gates a containerd daemon's version: the
// engine/containerd engine refuses a daemon older than MinVersion, and
// doctor judges the daemon it finds with the same Gate, without linking
// the containerd client (README, "Two binaries").
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
