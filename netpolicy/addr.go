package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// deniedRanges are the destinations the proxy never reaches, whatever the
// allowlist says, each with the reason a refusal names. Embedded IPv4
// addresses (IPv4-mapped, NAT64, 6to4) are unwrapped before this table is
// consulted, so ::ffff:127.0.0.1 is refused as loopback.
var deniedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this-network) address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT address (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address (cloud metadata lives here)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment (some clouds put metadata here)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private address (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking range (fake-IP DNS proxies use it)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast address"},
	{netip.MustParsePrefix("::/128"), "unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback address"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible IPv6 address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "discard-only address"},
	{netip.MustParsePrefix("2001::/32"), "Teredo tunnel address"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local (private) address"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// DeniedAddr reports whether the proxy refuses to connect to a, and why,
// by the fixed rules (deniedRanges). It unwraps IPv4 addresses embedded in
// IPv4-mapped, NAT64 and 6to4 IPv6 addresses and judges the embedded
// address too, and it refuses any address with a zone (a zone only makes
// sense on a local link). A running gateway also refuses the host's own
// addresses, which only it can know (see InterfaceAddrs).
func DeniedAddr(a netip.Addr) (reason string, denied bool) { return deniedAddr(a, nil) }

// deniedAddr is the one place where the proxy's address rules are
// decided: DeniedAddr's fixed rules, then, when own is set, the addresses
// of the host the gateway runs on, with the same unwrapping.
func deniedAddr(a netip.Addr, own *hostAddrs) (reason string, denied bool) {
	if !a.IsValid() {
		return "invalid address", true
	}
	if a.Zone() != "" {
		return "scoped (zoned) address", true
	}
	a = a.Unmap()
	if inner, ok := embeddedIPv4(a); ok {
		if r, bad := deniedAddr(inner, own); bad {
			return r + " embedded in " + a.String(), true
		}
	}
	for _, d := range deniedRanges {
		if d.prefix.Contains(a) {
			return d.reason, true
		}
	}
	if own != nil {
		return own.denied(a)
	}
	return "", false
}

// embeddedIPv4 extracts the IPv4 address a NAT64 or 6to4 address carries.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64Prefix.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// ErrMalformedHost is returned for a host that is neither a valid DNS name nor
// an address in any spelling, such as "0x7g.1" or "1.2.3.4.5".
var ErrMalformedHost = errors.New("malformed host")

// ParseHost reads a host as a client's resolver might: an IPv6 address (with
// or without brackets), or an IPv4 address in any inet_aton spelling
// (127.0.0.1, 2130706433, 0177.0.0.1, 0x7f.1, 127.1), or a DNS name. It
// returns the address when host is a literal, or the lowercased name without
// a trailing dot. A host whose last label is numeric but that is not a valid
// address is malformed, as in the WHATWG URL standard, so that no spelling of
// an address can pass for a name.
func ParseHost(host string) (name string, addr netip.Addr, err error) {
	h := strings.TrimSuffix(host, ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
		if !strings.Contains(h, ":") {
			return "", netip.Addr{}, fmt.Errorf("%w: %q", ErrMalformedHost, host)
		}
	}
	if strings.Contains(h, ":") || strings.Contains(h, "%") {
		a, perr := netip.ParseAddr(h)
		if perr != nil {
			return "", netip.Addr{}, fmt.Errorf("%w: %q", ErrMalformedHost, host)
		}
		return "", a, nil
	}
	if h == "" || len(h) > 253 {
		return "", netip.Addr{}, fmt.Errorf("%w: %q", ErrMalformedHost, host)
	}
	labels := strings.Split(h, ".")
	if looksNumeric(labels[len(labels)-1]) {
		a, ok := parseIPv4Loose(labels)
		if !ok {
			return "", netip.Addr{}, fmt.Errorf("%w: %q looks like an address but is not a valid one", ErrMalformedHost, host)
		}
		return "", a, nil
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", netip.Addr{}, fmt.Errorf("%w: %q", ErrMalformedHost, host)
		}
	}
	return strings.ToLower(h), netip.Addr{}, nil
}

// looksNumeric reports whether a label would make a URL parser treat the host
// as IPv4: all decimal digits, or 0x followed by hex digits (or nothing).
func looksNumeric(l string) bool {
	if l == "" {
		return false
	}
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		return isHex(l[2:])
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// parseIPv4Loose implements inet_aton: one to four parts, each decimal, octal
// (leading 0) or hex (leading 0x); the last part fills the remaining bytes.
func parseIPv4Loose(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	last := len(vals) - 1
	var n uint64
	for i := 0; i < last; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		n |= vals[i] << (24 - 8*uint(i))
	}
	if vals[last] >= 1<<(8*uint(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseIPv4Part(p string) (uint64, bool) {
	base, digits := 10, p
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, digits = 16, p[2:]
		if digits == "" {
			return 0, true // "0x" alone is zero for inet_aton
		}
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil || v > 0xffffffff {
		return 0, false
	}
	return v, true
}

// validLabel accepts the DNS label characters real hosts use: letters,
// digits, hyphen and underscore, 1 to 63 bytes, ASCII only.
func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
