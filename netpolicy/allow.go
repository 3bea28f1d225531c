package netpolicy

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Target is a proxy destination after parsing: a DNS name or an address,
// and a port.
type Target struct {
	Name string     // lowercased DNS name without trailing dot; empty for a literal
	Addr netip.Addr // the literal address; invalid for a name
	Port uint16
}

// String renders the target canonically ("example.com:443", "[::1]:443").
func (t Target) String() string {
	h := t.Name
	if h == "" {
		h = t.Addr.String()
	}
	return net.JoinHostPort(h, strconv.Itoa(int(t.Port)))
}

// ParseTarget parses "host:port" as a proxy destination. The port is
// required; the host is read by ParseHost, so every spelling of an address
// comes out as that address.
func ParseTarget(hostport string) (Target, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return Target{}, fmt.Errorf("%w: %q is not host:port", ErrMalformedHost, hostport)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 || port[0] == '0' || port[0] == '+' {
		return Target{}, fmt.Errorf("%w: bad port in %q", ErrMalformedHost, hostport)
	}
	name, addr, err := ParseHost(host)
	if err != nil {
		return Target{}, err
	}
	return Target{Name: name, Addr: addr, Port: uint16(p)}, nil
}

// Allowlist is the parsed form of network.allow: exact host:port entries
// and "*.domain:port" suffix entries. The zero Allowlist allows nothing.
type Allowlist struct {
	exact  map[string]bool // canonical host:port
	suffix map[uint16][]string
}

// ParseAllowlist parses network.allow entries. Each is host:port with a
// required port; a host may start with "*." to allow every name under a
// domain (not the domain itself). An entry naming a denied address is an
// error, since it could never be reached.
func ParseAllowlist(entries []string) (Allowlist, error) {
	a := newAllowlist()
	for i, e := range entries {
		if err := a.add(e); err != nil {
			return Allowlist{}, fmt.Errorf("allow[%d]: %w", i, err)
		}
	}
	return a, nil
}

func newAllowlist() Allowlist {
	return Allowlist{exact: map[string]bool{}, suffix: map[uint16][]string{}}
}

func (a *Allowlist) add(e string) error {
	if rest, ok := strings.CutPrefix(e, "*."); ok {
		t, err := ParseTarget(rest)
		if err != nil {
			return err
		}
		if t.Name == "" {
			return fmt.Errorf("%q: a wildcard needs a domain name, not an address", e)
		}
		a.suffix[t.Port] = append(a.suffix[t.Port], "."+t.Name)
		return nil
	}
	t, err := ParseTarget(e)
	if err != nil {
		return err
	}
	if t.Name == "" {
		if reason, bad := DeniedAddr(t.Addr); bad {
			return fmt.Errorf("%q is a %s, which the gateway never reaches", e, reason)
		}
	}
	a.exact[t.String()] = true
	return nil
}

// Allows reports whether t is on the list.
func (a Allowlist) Allows(t Target) bool {
	if a.exact[t.String()] {
		return true
	}
	if t.Name == "" {
		return false
	}
	for _, s := range a.suffix[t.Port] {
		if strings.HasSuffix(t.Name, s) {
			return true
		}
	}
	return false
}

// Len is the number of entries.
func (a Allowlist) Len() int {
	n := len(a.exact)
	for _, s := range a.suffix {
		n += len(s)
	}
	return n
}
