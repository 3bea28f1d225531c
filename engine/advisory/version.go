package advisory

import (
	"strconv"
	"strings"
	"unicode"
)

// upstreamVersion is a runtime's upstream version: numbers and an optional
// pre-release ("1.4.0-rc.3", "1.0.0-rc93").
type upstreamVersion struct {
	nums []int
	pre  string // "" for a release; dots removed: "rc3", "rc93"
}

// parseUpstream reads an upstream version, ignoring a leading "v" and
// build metadata after "+" ("1.1.5+ds1" is 1.1.5). Debian's "~" reads as
// "-". ok is false when the version does not start with a number.
func parseUpstream(s string) (upstreamVersion, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "+")
	s = strings.ReplaceAll(s, "~", "-")
	main, pre, _ := strings.Cut(s, "-")
	var v upstreamVersion
	for _, p := range strings.Split(main, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return upstreamVersion{}, false
		}
		v.nums = append(v.nums, n)
	}
	v.pre = strings.ReplaceAll(pre, ".", "")
	return v, true
}

// compareUpstream orders two upstream versions: -1, 0 or 1. A
// pre-release sorts before its release.
func compareUpstream(a, b upstreamVersion) int {
	for i := 0; i < max(len(a.nums), len(b.nums)); i++ {
		if c := cmpInt(at(a.nums, i), at(b.nums, i)); c != 0 {
			return c
		}
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	return compareMixed(a.pre, b.pre)
}

func at(n []int, i int) int {
	if i < len(n) {
		return n[i]
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareMixed compares alternating runs of letters (lexically) and digits
// (numerically): "rc7" < "rc93".
func compareMixed(a, b string) int {
	for a != "" || b != "" {
		la, ra := leadingRun(a)
		lb, rb := leadingRun(b)
		if c := compareRun(la, lb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
	return 0
}

func leadingRun(s string) (run, rest string) {
	if s == "" {
		return "", ""
	}
	digit := unicode.IsDigit(rune(s[0]))
	i := 1
	for i < len(s) && unicode.IsDigit(rune(s[i])) == digit {
		i++
	}
	return s[:i], s[i:]
}

func compareRun(a, b string) int {
	na, ea := strconv.Atoi(a)
	nb, eb := strconv.Atoi(b)
	if ea == nil && eb == nil {
		return cmpInt(na, nb)
	}
	return strings.Compare(a, b)
}

// packageUpstream is the upstream part of a package version: no epoch, no
// revision or release, no repack suffix ("1:1.0.0~rc93+ds1-5+deb11u3" gives
// "1.0.0~rc93").
func packageUpstream(v string) string {
	if _, rest, ok := strings.Cut(v, ":"); ok {
		v = rest
	}
	if i := strings.LastIndex(v, "-"); i >= 0 {
		v = v[:i]
	}
	v, _, _ = strings.Cut(v, "+")
	return v
}

// comparePackage orders two versions of one package under its manager's
// rules.
func comparePackage(manager, a, b string) int {
	if manager == "rpm" {
		return compareRPM(a, b)
	}
	return compareDeb(a, b)
}

// AtLeast reports whether the upstream version v ("1.8.1", "1.1.5+ds1")
// is min or later; false when v cannot be read.
func AtLeast(v, min string) bool {
	a, ok := parseUpstream(v)
	b, okMin := parseUpstream(min)
	return ok && okMin && compareUpstream(a, b) >= 0
}
