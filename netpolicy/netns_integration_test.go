//go:build integration && linux

package netpolicy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

const netnsHelperEnv = "AGENTBOX_NETPOLICY_NETNS_HELPER"

// TestNetnsRealDial runs the gateway with the host's real dialer and real
// interface list inside a network namespace made for the test (the
// "host"), linked by a veth pair to a second one (the "internet") where
// test hosts listen on TEST-NET addresses. More test hosts listen on the
// host's own veth address, on a private address, on the metadata address
// and on loopback. Reachable or not, only the allowlisted hosts outside may
// be connected to: the host's own addresses are refused like loopback,
// also by a name that rebinds to one, also when added after the gateway
// started. Nothing can leave: neither namespace has a route out.
func TestNetnsRealDial(t *testing.T) {
	if os.Getenv(netnsHelperEnv) == "1" {
		netnsBody(t)
		return
	}
	testutil.RequireBinary(t, "ip", "iproute2")
	cmd := exec.Command(os.Args[0], "-test.run=^TestNetnsRealDial$", "-test.v")
	cmd.Env = append(os.Environ(), netnsHelperEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(err.Error(), "operation not permitted") {
			testutil.Skip(t, "cannot create a network namespace here: "+err.Error())
		}
		t.Fatalf("netns helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestNetnsRealDial") {
		t.Fatalf("netns helper did not pass:\n%s", out)
	}
	t.Logf("netns helper:\n%s", out)
}

// ipCmd runs ip(8) in the network namespace of the calling thread.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
}

// outsideNS is a second network namespace, the test's internet: a
// goroutine locked to a thread that unshared its network namespace runs
// what must happen there (ip commands fork from that thread; sockets are
// made in the namespace of the thread that makes them). The thread is
// never unlocked, so it ends with the goroutine.
type outsideNS struct {
	do   chan func()
	path string // the namespace, as a path ip(8) takes
}

func newOutsideNS(t *testing.T) *outsideNS {
	o := &outsideNS{do: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ready <- err
			return
		}
		o.path = fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		ready <- nil
		for f := range o.do {
			f()
		}
	}()
	if err := <-ready; err != nil {
		t.Fatalf("unshare the outside network namespace: %v", err)
	}
	t.Cleanup(func() { close(o.do) })
	return o
}

func (o *outsideNS) run(f func()) {
	done := make(chan struct{})
	o.do <- func() { defer close(done); f() }
	<-done
}

// netnsBody is TestNetnsRealDial in the child, inside its network namespace.
func netnsBody(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Fatalf("refusing to run outside a fresh network namespace: interfaces %v, %v", ifs, err)
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", "10.0.0.2/32", "dev", "lo"},
		{"addr", "add", "169.254.169.254/32", "dev", "lo"},
	} {
		ipCmd(t, args...)
	}
	outside := newOutsideNS(t)
	ipCmd(t, "link", "add", "vhost", "type", "veth", "peer", "name", "vout", "netns", outside.path)
	outside.run(func() {
		ipCmd(t, "link", "set", "lo", "up")
		ipCmd(t, "addr", "add", "203.0.113.2/24", "dev", "vout")
		ipCmd(t, "-6", "addr", "add", "2001:db8::2/64", "dev", "vout", "nodad")
		ipCmd(t, "link", "set", "vout", "up")
	})
	ipCmd(t, "addr", "add", "203.0.113.1/24", "dev", "vhost")
	ipCmd(t, "-6", "addr", "add", "2001:db8::1/64", "dev", "vhost", "nodad")
	ipCmd(t, "link", "set", "vhost", "up")

	ca := newTestCA(t, "allowed.test", "v6.test", "rebind.test", "private.test", "metadata.test", "own.test", "own6.test", "added.test",
		"203.0.113.1", "2001:db8::1")
	hosts := map[string]*atomic.Int64{}
	for _, a := range []string{"203.0.113.2", "2001:db8::2"} {
		outside.run(func() { hosts[a] = tlsHost(t, ca, a) })
	}
	for _, a := range []string{"203.0.113.1", "2001:db8::1", "10.0.0.2", "169.254.169.254", "127.0.0.1"} {
		hosts[a] = tlsHost(t, ca, a)
	}
	resolver := newTestResolver(map[string][]string{
		"allowed.test": {"203.0.113.2"}, "v6.test": {"2001:db8::2"}, "private.test": {"10.0.0.2"},
		"metadata.test": {"169.254.169.254"}, "rebind.test": {"203.0.113.2", "203.0.113.1"},
		"own.test": {"203.0.113.1"}, "own6.test": {"2001:db8::1"}, "added.test": {"198.51.100.9"},
	})
	g, err := New(Config{RunID: "netns", Token: testToken, Allow: []string{
		"allowed.test:8443", "v6.test:8443", "private.test:8443", "metadata.test:8443", "rebind.test:8443",
		"own.test:8443", "own6.test:8443", "added.test:8443", "203.0.113.1:8443", "[2001:db8::1]:8443",
	}}, WithResolver(resolver))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(l)
	gw := l.Addr().String()

	for _, target := range []string{"allowed.test", "v6.test", "rebind.test"} {
		if got := getThrough(t, gw, target, ca); !strings.HasPrefix(got, "hello from ") {
			t.Errorf("%s through the gateway: %q", target, got)
		}
	}
	for _, target := range []string{
		"private.test:8443", "metadata.test:8443", "rebind.test:8443", "own.test:8443", "own6.test:8443",
		"203.0.113.1:8443", "[2001:db8::1]:8443", "[::ffff:203.0.113.1]:8443",
		"127.0.0.1:8443", "169.254.169.254:8443", "10.0.0.2:8443", "[::ffff:10.0.0.2]:8443",
	} {
		if status, reason := connectThrough(t, gw, target); status != http.StatusForbidden {
			t.Errorf("CONNECT %s: %d %q, want 403", target, status, reason)
		}
	}
	for _, target := range []string{"own.test:8443", "own6.test:8443", "203.0.113.1:8443", "[2001:db8::1]:8443", "rebind.test:8443"} {
		if _, reason := connectThrough(t, gw, target); !strings.Contains(reason, "host address") {
			t.Errorf("CONNECT %s refused for another reason: %q", target, reason)
		}
	}

	// An address the host gains after the gateway started is refused too,
	// once the list is read again (here at every decision).
	g.own.mu.Lock()
	g.own.maxAge = 0
	g.own.mu.Unlock()
	if status, reason := connectThrough(t, gw, "added.test:8443"); status != http.StatusBadGateway {
		t.Errorf("CONNECT added.test before the host has its address: %d %q, want 502 (no route)", status, reason)
	}
	ipCmd(t, "addr", "add", "198.51.100.9/32", "dev", "lo")
	hosts["198.51.100.9"] = tlsHost(t, ca, "198.51.100.9")
	if status, reason := connectThrough(t, gw, "added.test:8443"); status != http.StatusForbidden || !strings.Contains(reason, "host address") {
		t.Errorf("CONNECT added.test once the host has its address: %d %q, want 403 naming the host address", status, reason)
	}

	for a, n := range hosts {
		want := int64(0)
		switch a {
		case "203.0.113.2":
			want = 2 // allowed.test and the first resolution of rebind.test
		case "2001:db8::2":
			want = 1
		}
		if n.Load() != want {
			t.Errorf("test host %s accepted %d connections, want %d", a, n.Load(), want)
		}
	}
	if n := resolver.count("rebind.test"); n != 3 {
		t.Errorf("rebind.test resolved %d times for three requests", n)
	}
}

// connectThrough asks the gateway for a CONNECT tunnel to target and
// returns the status and refusal reason.
func connectThrough(t *testing.T, gw, target string) (int, string) {
	c, err := net.Dial("tcp", gw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, resp.Header.Get("X-Agentbox-Refusal")
}

// tlsHost serves "hello from ADDR" over TLS on ADDR:8443 and counts the
// connections it accepts. It listens in the network namespace of the
// calling thread.
func tlsHost(t *testing.T, ca *testCA, addr string) *atomic.Int64 {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "8443"))
	if err != nil {
		t.Fatalf("test host %s: %v", addr, err)
	}
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+addr)
	}))
	srv.Listener = l
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &n
}

// getThrough fetches https://NAME:8443/ through the gateway's CONNECT.
func getThrough(t *testing.T, gw, name string, ca *testCA) string {
	c, err := net.Dial("tcp", gw)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT "+name+":8443 HTTP/1.1\r\nHost: "+name+":8443\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("CONNECT %s: %v %v", name, resp, err)
		return ""
	}
	tc := tls.Client(c, &tls.Config{ServerName: name, RootCAs: ca.pool})
	io.WriteString(tc, "GET / HTTP/1.1\r\nHost: "+name+"\r\nConnection: close\r\n\r\n")
	r, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Errorf("GET through the tunnel to %s: %v", name, err)
		return ""
	}
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
