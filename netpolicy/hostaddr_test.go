package netpolicy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestDeniedHostAddr: the host's own addresses are refused in every
// spelling the fixed rules see through, and only while the host has them.
func TestDeniedHostAddr(t *testing.T) {
	own, err := newHostAddrs(newTestHost().list)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		addr   string
		denied bool
	}{
		{"198.51.100.1", true},
		{"::ffff:198.51.100.1", true},
		{"64:ff9b::c633:6401", true}, // NAT64
		{"2002:c633:6401::1", true},  // 6to4
		{"2001:db8:1::1", true},
		{"198.51.100.2", false},
		{"2001:db8:1::2", false},
	} {
		reason, denied := deniedAddr(netip.MustParseAddr(tt.addr), own)
		if denied != tt.denied || denied && !strings.Contains(reason, "host address") {
			t.Errorf("deniedAddr(%s) = %v (%s), want %v", tt.addr, denied, reason, tt.denied)
		}
		if _, fixed := DeniedAddr(netip.MustParseAddr(tt.addr)); fixed {
			t.Errorf("%s is refused by the fixed rules; the case tests nothing", tt.addr)
		}
	}
	if _, err := newHostAddrs(func() ([]netip.Addr, error) { return nil, errors.New("netlink says no") }); err == nil {
		t.Error("a gateway that cannot read the host's addresses would start")
	}
}

// TestProxyRefusesHostAddrs: CONNECT and absolute-form requests to one of
// the host's own addresses are refused like loopback, by literal or by a
// name that resolves (or rebinds) to one; the list is read again, and a
// list that cannot be read refuses.
func TestProxyRefusesHostAddrs(t *testing.T) {
	names := map[string][]string{
		"own.test":        {"198.51.100.1"},
		"own6.test":       {"2001:db8:1::1"},
		"ownmixed.test":   {"203.0.113.20,198.51.100.1"},
		"rebind-own.test": {"203.0.113.21", "198.51.100.1"},
		"later.test":      {"198.51.100.2"},
	}
	allow := []string{
		"own.test:443", "own6.test:443", "ownmixed.test:443", "rebind-own.test:443", "later.test:443",
		"198.51.100.1:443", "[2001:db8:1::1]:443", "own.test:80",
	}
	tg := startGateway(t, Config{Allow: allow}, names, nil)
	echo := echoServer(t)
	for _, a := range []string{"198.51.100.1:443", "[2001:db8:1::1]:443", "198.51.100.1:80", "203.0.113.20:443", "203.0.113.21:443", "198.51.100.2:443"} {
		tg.dialer.route(a, echo) // so that a connection that should not happen would succeed
	}
	refused := func(raw string) {
		t.Helper()
		c, err := net.Dial("tcp", tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: strings.Fields(raw)[0]})
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("X-Agentbox-Refusal"), "host address") {
			t.Errorf("%q: %s %q, want 403 naming the host address", raw, resp.Status, resp.Header.Get("X-Agentbox-Refusal"))
		}
	}
	for _, target := range []string{"198.51.100.1:443", "[2001:db8:1::1]:443", "own.test:443", "own6.test:443", "ownmixed.test:443"} {
		refused("CONNECT " + target + " HTTP/1.1\r\n\r\n")
	}
	refused("GET http://own.test/ HTTP/1.1\r\nHost: own.test\r\n\r\n")
	connect(t, tg.addr, "rebind-own.test:443").Close()
	refused("CONNECT rebind-own.test:443 HTTP/1.1\r\n\r\n")

	tg.own.mu.Lock()
	tg.own.maxAge = 0 // read the list at every decision, so the change below is seen at once
	tg.own.mu.Unlock()
	connect(t, tg.addr, "later.test:443").Close()
	host, _ := tg.host.list()
	tg.host.set(append(host, netip.MustParseAddr("198.51.100.2")), nil)
	refused("CONNECT later.test:443 HTTP/1.1\r\n\r\n")

	tg.host.set(nil, errors.New("netlink says no"))
	if resp := tg.rawRequest(t, "CONNECT rebind-own.test:443 HTTP/1.1\r\n\r\n"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("with no host address list: %s, want 403", resp.Status)
	}
	for _, a := range tg.dialer.asked() {
		if a != "203.0.113.21:443" && a != "198.51.100.2:443" {
			t.Errorf("the gateway dialed %s", a)
		}
	}
}
