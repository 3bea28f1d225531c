package advisory

import (
	"strconv"
	"strings"
)

// splitEVR splits "epoch:version-revision"; a missing epoch is 0 and a
// missing revision "".
func splitEVR(v string) (epoch int, version, revision string) {
	if e, rest, ok := strings.Cut(v, ":"); ok {
		if n, err := strconv.Atoi(e); err == nil {
			epoch, v = n, rest
		}
	}
	if i := strings.LastIndex(v, "-"); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

// compareDeb orders two Debian package versions as dpkg does
// (deb-version(7)): epoch, then upstream version, then revision, each part
// compared by verrevcmp, where "~" sorts before everything, even the end.
func compareDeb(a, b string) int {
	ea, va, ra := splitEVR(a)
	eb, vb, rb := splitEVR(b)
	if c := cmpInt(ea, eb); c != 0 {
		return c
	}
	if c := verrevcmp(va, vb); c != 0 {
		return c
	}
	return verrevcmp(ra, rb)
}

// debOrder is the weight of one character in a non-digit run.
func debOrder(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	c := s[i]
	switch {
	case isDigit(c):
		return 0
	case isAlpha(c):
		return int(c)
	case c == '~':
		return -1
	}
	return int(c) + 256
}

func verrevcmp(a, b string) int {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for (i < len(a) && !isDigit(a[i])) || (j < len(b) && !isDigit(b[j])) {
			if ac, bc := debOrder(a, i), debOrder(b, j); ac != bc {
				return sign(ac - bc)
			}
			i, j = i+1, j+1
		}
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		first := 0
		for i < len(a) && j < len(b) && isDigit(a[i]) && isDigit(b[j]) {
			if first == 0 {
				first = int(a[i]) - int(b[j])
			}
			i, j = i+1, j+1
		}
		if i < len(a) && isDigit(a[i]) {
			return 1
		}
		if j < len(b) && isDigit(b[j]) {
			return -1
		}
		if first != 0 {
			return sign(first)
		}
	}
	return 0
}

// compareRPM orders two "epoch:version-release" strings as rpm does:
// epoch, then rpmvercmp on version and on release.
func compareRPM(a, b string) int {
	ea, va, ra := splitEVR(a)
	eb, vb, rb := splitEVR(b)
	if c := cmpInt(ea, eb); c != 0 {
		return c
	}
	if c := rpmvercmp(va, vb); c != 0 {
		return c
	}
	return rpmvercmp(ra, rb)
}

// rpmvercmp is rpm's segment comparison: runs of digits compare
// numerically and beat runs of letters, "~" sorts before everything and
// "^" after the end but before anything else.
func rpmvercmp(a, b string) int {
	for a != "" || b != "" {
		a, b = a[len(rpmSeparators(a)):], b[len(rpmSeparators(b)):]
		if c, done, ok := rpmTilde(&a, &b); ok {
			if done {
				return c
			}
			continue
		}
		if a == "" || b == "" {
			break
		}
		num := isDigit(a[0])
		sa, ra := rpmSegment(a, num)
		sb, rb := rpmSegment(b, num)
		if sb == "" {
			return map[bool]int{true: 1, false: -1}[num]
		}
		if c := compareSegment(sa, sb, num); c != 0 {
			return c
		}
		a, b = ra, rb
	}
	switch {
	case a == "" && b == "":
		return 0
	case a != "":
		return 1
	}
	return -1
}

// rpmTilde handles the "~" and "^" rules at the head of a and b. ok says
// a rule applied; done that c is the answer.
func rpmTilde(a, b *string) (c int, done, ok bool) {
	ha, hb := head(*a), head(*b)
	switch {
	case ha == '~' || hb == '~':
		if ha != '~' {
			return 1, true, true
		}
		if hb != '~' {
			return -1, true, true
		}
	case ha == '^' || hb == '^':
		switch {
		case *a == "":
			return -1, true, true
		case *b == "":
			return 1, true, true
		case ha != '^':
			return 1, true, true
		case hb != '^':
			return -1, true, true
		}
	default:
		return 0, false, false
	}
	*a, *b = (*a)[1:], (*b)[1:]
	return 0, false, true
}

func head(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// rpmSeparators is the run of separator characters at the head of s.
func rpmSeparators(s string) string {
	i := 0
	for i < len(s) && !isAlpha(s[i]) && !isDigit(s[i]) && s[i] != '~' && s[i] != '^' {
		i++
	}
	return s[:i]
}

func rpmSegment(s string, num bool) (seg, rest string) {
	i := 0
	for i < len(s) && (num && isDigit(s[i]) || !num && isAlpha(s[i])) {
		i++
	}
	return s[:i], s[i:]
}

func compareSegment(a, b string, num bool) int {
	if num {
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if c := cmpInt(len(a), len(b)); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func sign(n int) int { return cmpInt(n, 0) }
