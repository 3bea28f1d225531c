package selftest

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// probeFence decides internet-unreachable where the agent shares the
// host's network (Targets.Fence): a TCP connect to each of the launcher's
// listeners on loopback ports other than the gateway's. Only the answers of
// a filter show the fence: a refusal (the fence's reset: the listener is
// open), EHOSTUNREACH, EACCES or EPERM (a rejection or a drop, since
// loopback always has a route); a connect that
// succeeds is ALLOW, anything else cannot be told from a fence that is not
// there and is UNKNOWN. No packet is aimed anywhere but the host's own
// loopback.
func probeFence(e *Env) outcome {
	var w worst
	var targets []string
	for _, c := range e.Config.Targets.Fence {
		targets = append(targets, c.Addr)
		d, o := dialFence(c, e.Config.timeout())
		w.add(d, o, "connect "+c.Addr+" (a listener of the launcher outside the gateway's port): "+o)
	}
	out := w.outcome(strings.Join(targets, ","))
	if out.decision == Deny {
		out.detail += "; the fence's catch-all drop for this uid refused it, the rule every outside destination meets"
	}
	return out
}

func dialFence(c NetCanary, timeout time.Duration) (Decision, string) {
	conn, err := dialer(timeout).DialContext(context.Background(), "tcp", c.Addr)
	switch {
	case err == nil:
		defer conn.Close()
		if digestMatches(readToken(conn, timeout), c.TokenSHA256) {
			return Allow, "reached-canary"
		}
		return Allow, "connected"
	case errors.Is(err, unix.ECONNREFUSED):
		// The launcher's listener is open: the reset is the fence's.
		return Deny, "fenced-reset"
	case errors.Is(err, unix.EHOSTUNREACH), errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		// Loopback always has a route: only a filter answers so.
		return Deny, "fenced-" + errnoName(err)
	}
	_, o := decideConnect(err)
	return Unknown, o
}

// probeFenceDNS is dns-unresolvable where the agent shares the host's
// network: a DNS query over UDP to each fence listener's address (port 53
// is the gateway's only where the gateway is on 53, never). The send must
// be refused (EPERM); a resolver's answer could only come from a fence that
// lets UDP out.
func probeFenceDNS(e *Env) outcome {
	var w worst
	var targets []string
	for _, c := range e.Config.Targets.Fence {
		host, _, err := net.SplitHostPort(c.Addr)
		if err != nil {
			w.add(Unknown, "bad-target", err.Error())
			continue
		}
		addr := net.JoinHostPort(host, "53")
		targets = append(targets, addr)
		d, o := sendFenceUDP(addr, e.Config.timeout())
		w.add(d, o, "DNS query to "+addr+" over UDP: "+o)
	}
	return w.outcome(strings.Join(targets, ","))
}

func sendFenceUDP(addr string, timeout time.Duration) (Decision, string) {
	conn, err := net.DialTimeout("udp", addr, timeout)
	if err != nil {
		return decideConnect(err)
	}
	defer conn.Close()
	// A query for "." NS: 12-byte header, root name, type 2, class 1.
	q := []byte{0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1}
	_, err = conn.Write(q)
	switch {
	case errors.Is(err, unix.EPERM):
		return Deny, "fenced"
	case err != nil:
		_, o := decideConnect(err)
		return Unknown, o
	}
	return Allow, "sent"
}
