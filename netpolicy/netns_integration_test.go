//go:build integration

package netpolicy

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

const netnsHelperEnv = "AGENTBOX_NETPOLICY_NETNS_HELPER"

// TestNetnsRealDial runs the gateway with the host's real dialer inside a
// network namespace made for the test, where test hosts listen on a
// "public" TEST-NET address, on a private address, on the metadata address
// and on loopback. Reachable or not, only the allowlisted public host may be
// connected to. Nothing can leave: the namespace has no route out.
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

// netnsBody is TestNetnsRealDial in the child, inside its network namespace.
func netnsBody(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Fatalf("refusing to run outside a fresh network namespace: interfaces %v, %v", ifs, err)
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", "203.0.113.2/32", "dev", "lo"},
		{"addr", "add", "10.0.0.2/32", "dev", "lo"},
		{"addr", "add", "169.254.169.254/32", "dev", "lo"},
		{"-6", "addr", "add", "2001:db8::2/128", "dev", "lo", "nodad"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	ca := newTestCA(t, "allowed.test", "v6.test", "rebind.test", "private.test", "metadata.test")
	hosts := map[string]*atomic.Int64{}
	for _, a := range []string{"203.0.113.2", "2001:db8::2", "10.0.0.2", "169.254.169.254", "127.0.0.1"} {
		hosts[a] = tlsHost(t, ca, a)
	}
	resolver := newTestResolver(map[string][]string{
		"allowed.test": {"203.0.113.2"}, "v6.test": {"2001:db8::2"}, "private.test": {"10.0.0.2"},
		"metadata.test": {"169.254.169.254"}, "rebind.test": {"203.0.113.2", "127.0.0.1"},
	})
	g, err := New(Config{RunID: "netns", Token: testToken, Allow: []string{
		"allowed.test:8443", "v6.test:8443",
		"private.test:8443", "metadata.test:8443", "rebind.test:8443",
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
		"private.test:8443", "metadata.test:8443", "rebind.test:8443",
		"127.0.0.1:8443", "169.254.169.254:8443", "10.0.0.2:8443", "[::ffff:10.0.0.2]:8443",
	} {
		c, err := net.Dial("tcp", gw)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
		c.Close()
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("CONNECT %s: %v %v, want 403", target, resp, err)
		}
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
	if n := resolver.count("rebind.test"); n != 2 {
		t.Errorf("rebind.test resolved %d times for two requests", n)
	}
}

// tlsHost serves "hello from ADDR" over TLS on ADDR:8443 and counts the
// connections it accepts.
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
