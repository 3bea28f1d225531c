package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// denial is a refusal with a reason for the agent and the log.
type denial struct{ reason string }

func (d *denial) Error() string { return d.reason }

func deny(format string, args ...any) error { return &denial{fmt.Sprintf(format, args...)} }

// resolve returns the addresses to try for t: the literal itself, or what
// the resolver answers for the name, resolved exactly once. When checked is
// set, every address must pass deniedAddr (the fixed rules and the host's
// own addresses); one bad address refuses the whole name, since a name
// that resolves into the host's networks is suspect.
func (g *Gateway) resolve(ctx context.Context, t Target, checked bool) ([]netip.Addr, error) {
	if t.Name == "" {
		if reason, bad := g.refused(t.Addr, checked); bad {
			return nil, deny("%s is a %s", t.Addr, reason)
		}
		return []netip.Addr{t.Addr.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(g.limits.DialTimeout))
	defer cancel()
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", t.Name)
	if err != nil {
		return nil, deny("cannot resolve %s: %v", t.Name, err)
	}
	if len(addrs) == 0 {
		return nil, deny("%s has no address", t.Name)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if reason, bad := g.refused(a, checked); bad {
			return nil, deny("%s resolves to %s, a %s", t.Name, a, reason)
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// refused applies the proxy's address rules (deniedAddr, with the host's
// own addresses) when checked is set.
func (g *Gateway) refused(a netip.Addr, checked bool) (string, bool) {
	if !checked {
		return "", false
	}
	return deniedAddr(a, g.own)
}

// dialAddrs connects to the first of addrs that answers, on port, and to
// nothing else: the addresses are literals, so the dialer resolves nothing.
func (g *Gateway) dialAddrs(ctx context.Context, addrs []netip.Addr, port uint16) (net.Conn, error) {
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		dctx, cancel := context.WithTimeout(ctx, time.Duration(g.limits.DialTimeout))
		c, err := g.dialer.DialContext(dctx, "tcp", ap.String())
		cancel()
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("connect: %w", errors.Join(errs...))
}

// upstreamDialer is the DialContext of a model route's transport. Built-in
// upstreams (checked) are held to the proxy's address rules; an upstream the
// user named may be anywhere, loopback included.
func (g *Gateway) upstreamDialer(checked bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("upstream port %q: %w", port, err)
		}
		name, a, err := ParseHost(host)
		if err != nil {
			return nil, err
		}
		addrs, err := g.resolve(ctx, Target{Name: name, Addr: a, Port: uint16(p)}, checked)
		if err != nil {
			return nil, err
		}
		return g.dialAddrs(ctx, addrs, uint16(p))
	}
}
