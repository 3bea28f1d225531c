package selftest

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// dnsQueryName is asked of resolvers: the .invalid TLD (RFC 6761) names no
// real host, and any answer at all, NXDOMAIN included, proves the resolver
// is reachable.
const dnsQueryName = "agentbox-probe.invalid"

// nameservers returns the resolvers to check and whether they were
// configured; without configuration, those of /etc/resolv.conf, or
// 127.0.0.1 and ::1 as the C library would use when it names none.
func nameservers(e *Env) ([]string, bool) {
	if len(e.Config.Targets.DNS) > 0 {
		return e.Config.Targets.DNS, true
	}
	b, _ := os.ReadFile("/etc/resolv.conf")
	var out []string
	for _, ns := range parseNameservers(b) {
		if a, err := netip.ParseAddr(strings.SplitN(ns, "%", 2)[0]); err == nil {
			out = append(out, netip.AddrPortFrom(a, 53).String())
		}
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1:53", "[::1]:53"}
	}
	return out, false
}

// probeDNS: a configured resolver, or a loopback one (whose traffic cannot
// leave the namespace), is sent one query; any other resolver is only
// route-looked-up.
func probeDNS(e *Env) outcome {
	if len(e.Config.Targets.Fence) > 0 && len(e.Config.Targets.DNS) == 0 {
		return probeFenceDNS(e) // the host's resolvers are outside: never aimed at
	}
	servers, configured := nameservers(e)
	var w worst
	for _, s := range servers {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			w.add(Unknown, "bad-target", s+": "+err.Error())
			continue
		}
		if d, o := decideRoute(routeLookup(ap)); d != Allow {
			w.add(d, o, "route lookup "+s+": "+o)
			continue
		}
		if !configured && !ap.Addr().IsLoopback() {
			w.add(Allow, "route", "route to resolver "+s+" (no query sent)")
			continue
		}
		d, o := decideDNS(queryDNS(ap, e.Config.timeout()), ap.Addr().IsLoopback())
		w.add(d, o, "query "+s+": "+o)
	}
	return w.outcome(strings.Join(servers, ","))
}

// decideDNS: an answer is ALLOW; a refusal DENY; silence from a loopback
// resolver DENY (nothing listens), from an outside one UNKNOWN.
func decideDNS(err error, loopback bool) (Decision, string) {
	var ne net.Error
	switch {
	case err == nil:
		return Allow, "resolver-answered"
	case errors.Is(err, unix.ECONNREFUSED):
		return Deny, "refused"
	case errors.As(err, &ne) && ne.Timeout() && loopback:
		return Deny, "no-answer"
	}
	d, o := decideConnect(err)
	if d == Allow {
		return Unknown, o
	}
	return d, o
}

// queryDNS sends one A query for dnsQueryName and waits for a reply that
// carries its id.
func queryDNS(server netip.AddrPort, timeout time.Duration) error {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(server))
	if err != nil {
		return err
	}
	defer c.Close()
	q, id := dnsQuery(dnsQueryName)
	if _, err := c.Write(q); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 1500)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		if n >= 12 && binary.BigEndian.Uint16(buf) == id && buf[2]&0x80 != 0 {
			return nil
		}
	}
}

// dnsQuery encodes a recursive query for name's A record with a random id.
func dnsQuery(name string) ([]byte, uint16) {
	var idb [2]byte
	_, _ = rand.Read(idb[:])
	id := binary.BigEndian.Uint16(idb[:])
	msg := binary.BigEndian.AppendUint16(nil, id)
	msg = append(msg, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0) // RD; one question
	for _, label := range strings.Split(strings.Trim(name, "."), ".") {
		msg = append(msg, byte(len(label)))
		msg = append(msg, label...)
	}
	return append(msg, 0, 0, 1, 0, 1), id // root, type A, class IN
}
