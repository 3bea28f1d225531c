package netpolicy

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// proxyNames is the test resolver's view of the world. 203.0.113.0/24
// (TEST-NET-3) stands for the public internet; the test dialer redirects it
// to local listeners and refuses anything else that is not loopback.
var proxyNames = map[string][]string{
	"allowed.test":      {"203.0.113.7"},
	"allowed-http.test": {"203.0.113.8"},
	"private.test":      {"10.1.2.3"},
	"metadata.test":     {"169.254.169.254"},
	"mapped.test":       {"::ffff:127.0.0.1"},
	"nat64.test":        {"64:ff9b::a9fe:a9fe"},
	"mixed.test":        {"203.0.113.9,127.0.0.1"},
	"rebind.test":       {"203.0.113.10", "127.0.0.1"},
	"evil.test":         {"203.0.113.66"},
}

var proxyAllow = []string{
	"allowed.test:443", "allowed-http.test:80", "private.test:443", "metadata.test:80",
	"mapped.test:443", "nat64.test:443", "mixed.test:443", "rebind.test:443", "203.0.113.7:443",
}

// TestBypassCorpus sends every known way around the allowlist. Each must be
// refused with the right status, logged as a denial, and leave the gateway
// serving.
func TestBypassCorpus(t *testing.T) {
	tg := startGateway(t, Config{Allow: proxyAllow}, proxyNames, nil)
	big := strings.Repeat("a", DefaultMaxHeaderBytes)
	corpus := []struct {
		name, raw string
		status    int
	}{
		{"loopback", "CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", 403},
		{"decimal", "CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", 403},
		{"hex", "CONNECT 0x7f000001:443 HTTP/1.1\r\n\r\n", 403},
		{"octal", "CONNECT 0177.0.0.1:443 HTTP/1.1\r\n\r\n", 403},
		{"short", "CONNECT 127.1:443 HTTP/1.1\r\n\r\n", 403},
		{"mixed radix", "CONNECT 0x7f.0.0.01:443 HTTP/1.1\r\n\r\n", 403},
		{"trailing dot", "CONNECT 127.0.0.1.:443 HTTP/1.1\r\n\r\n", 403},
		{"zero", "CONNECT 0:443 HTTP/1.1\r\n\r\n", 403},
		{"metadata", "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n", 403},
		{"metadata decimal", "CONNECT 2852039166:80 HTTP/1.1\r\n\r\n", 403},
		{"private", "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n", 403},
		{"cgnat", "CONNECT 100.100.100.200:80 HTTP/1.1\r\n\r\n", 403},
		{"ipv6 loopback", "CONNECT [::1]:443 HTTP/1.1\r\n\r\n", 403},
		{"ipv6 unspecified", "CONNECT [::]:443 HTTP/1.1\r\n\r\n", 403},
		{"ipv4-mapped", "CONNECT [::ffff:127.0.0.1]:443 HTTP/1.1\r\n\r\n", 403},
		{"ipv4-mapped hex", "CONNECT [::ffff:7f00:1]:443 HTTP/1.1\r\n\r\n", 403},
		{"ipv4-compatible", "CONNECT [::127.0.0.1]:443 HTTP/1.1\r\n\r\n", 403},
		{"nat64", "CONNECT [64:ff9b::7f00:1]:443 HTTP/1.1\r\n\r\n", 403},
		{"6to4", "CONNECT [2002:7f00:1::1]:443 HTTP/1.1\r\n\r\n", 403},
		{"link-local zone", "CONNECT [fe80::1%25lo]:443 HTTP/1.1\r\n\r\n", 403},
		{"ula metadata", "CONNECT [fd00:ec2::254]:80 HTTP/1.1\r\n\r\n", 403},
		{"not allowlisted", "CONNECT evil.test:443 HTTP/1.1\r\n\r\n", 403},
		{"allowlisted host other port", "CONNECT allowed.test:22 HTTP/1.1\r\n\r\n", 403},
		{"name to private", "CONNECT private.test:443 HTTP/1.1\r\n\r\n", 403},
		{"name to metadata", "CONNECT metadata.test:80 HTTP/1.1\r\n\r\n", 403},
		{"name to mapped loopback", "CONNECT mapped.test:443 HTTP/1.1\r\n\r\n", 403},
		{"name to nat64 metadata", "CONNECT nat64.test:443 HTTP/1.1\r\n\r\n", 403},
		{"name with one bad address", "CONNECT mixed.test:443 HTTP/1.1\r\n\r\n", 403},
		{"malformed numeric host", "CONNECT 1.2.3.4.5:443 HTTP/1.1\r\n\r\n", 400},
		{"no port", "CONNECT allowed.test HTTP/1.1\r\n\r\n", 400},
		{"host disagrees", "CONNECT allowed.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", 400},
		{"host port disagrees", "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:8443\r\n\r\n", 400},
		{"two hosts", "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\nhost: evil.test\r\n\r\n", 400},
		{"absolute to loopback", "GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 403},
		{"absolute to gateway itself", "GET http://" + tg.addr + HealthPath + " HTTP/1.1\r\nHost: " + tg.addr + "\r\n\r\n", 403},
		{"absolute decimal", "GET http://2130706433/ HTTP/1.1\r\nHost: 2130706433\r\n\r\n", 403},
		{"absolute mapped", "GET http://[::ffff:127.0.0.1]/ HTTP/1.1\r\nHost: [::ffff:127.0.0.1]\r\n\r\n", 403},
		{"absolute smuggled host", "GET http://allowed-http.test/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400},
		{"absolute missing host", "GET http://allowed-http.test/ HTTP/1.1\r\n\r\n", 400},
		{"absolute userinfo", "GET http://allowed-http.test@127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400},
		{"absolute https", "GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
		{"absolute percent-encoded", "GET http://%31%32%37.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400},
		{"scheme-relative", "GET //127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400},
		{"asterisk", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"oversized head", "GET /openai/v1 HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n", 431},
		{"malformed request line", "CONNECT\r\n\r\n", 400},
		{"bad version", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505},
		{"header injection", "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\nX: a\rb\r\n\r\n", 400},
	}
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			before := tg.Stats().Denied
			resp := tg.rawRequest(t, c.raw)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Errorf("%s, want %d (%s)", resp.Status, c.status, body)
			}
			if !strings.HasPrefix(string(body), "agentbox gateway: refused: ") || resp.Header.Get("X-Agentbox-Refusal") == "" {
				t.Errorf("the refusal gives no reason: %q", body)
			}
			if tg.Stats().Denied != before+1 {
				t.Errorf("denials went from %d to %d", before, tg.Stats().Denied)
			}
			tg.healthy(t)
		})
	}
	if got := tg.resolver.count("evil.test"); got != 0 {
		t.Errorf("a name that is not allowlisted was resolved %d times", got)
	}
	for _, a := range tg.dialer.asked() {
		t.Errorf("the gateway dialed %s during the corpus", a)
	}
	for _, d := range tg.log.decisions(t) {
		if d.Kind != "health" && (d.Decision != Deny || d.Reason == "" || d.RunID != "run-test") {
			t.Errorf("log line %+v", d)
		}
	}
}

// TestRebinding: a name is resolved once per request and the gateway
// connects to the address it checked, so a second answer (here loopback)
// is never used for that connection.
func TestRebinding(t *testing.T) {
	tg := startGateway(t, Config{Allow: proxyAllow}, proxyNames, nil)
	echo := echoServer(t)
	tg.dialer.route("203.0.113.10:443", echo)
	c := connect(t, tg.addr, "rebind.test:443")
	io.WriteString(c, "ping\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("tunnel echo = %q, %v", line, err)
	}
	c.Close()
	if n := tg.resolver.count("rebind.test"); n != 1 {
		t.Errorf("rebind.test was resolved %d times for one CONNECT", n)
	}
	if d := tg.dialer.asked(); len(d) != 1 || d[0] != "203.0.113.10:443" {
		t.Errorf("dialed %v, want exactly the checked 203.0.113.10:443", d)
	}
	// The next request resolves anew, gets loopback and is refused.
	if resp := tg.rawRequest(t, "CONNECT rebind.test:443 HTTP/1.1\r\n\r\n"); resp.StatusCode != 403 {
		t.Errorf("second CONNECT: %s, want 403", resp.Status)
	}
}

// TestConnectTLSUntouched: an allowed CONNECT carries TLS end to end; the
// client verifies the destination's certificate, so the gateway cannot have
// looked inside.
func TestConnectTLSUntouched(t *testing.T) {
	tg := startGateway(t, Config{Allow: proxyAllow}, proxyNames, nil)
	ca := newTestCA(t, "allowed.test")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello over TLS "+r.Host)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf}}
	srv.StartTLS()
	defer srv.Close()
	tg.dialer.route("203.0.113.7:443", srv.Listener.Addr().String())
	proxyURL, _ := url.Parse("http://" + tg.addr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: ca.pool}}}
	for range 2 {
		resp, err := client.Get("https://allowed.test/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello over TLS allowed.test" {
			t.Errorf("got %q", b)
		}
	}
	client.CloseIdleConnections()
	waitFor(t, func() bool { return tg.Stats().Allowed >= 1 })
	for _, d := range tg.log.decisions(t) {
		if d.Kind == "connect" && (d.Decision != Allow || d.BytesUp == 0 || d.BytesDn == 0 || d.Resolved == "") {
			t.Errorf("log line %+v", d)
		}
	}
}

// TestForwardHTTP: an absolute-form request to an allowlisted host is sent
// in origin form with the checked Host, without proxy credentials, and the
// client connection stays usable.
func TestForwardHTTP(t *testing.T) {
	tg := startGateway(t, Config{Allow: proxyAllow}, proxyNames, nil)
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.record(r)
		w.Header().Set("X-Host", r.Host)
		io.WriteString(w, "plain "+r.URL.RequestURI())
	}))
	defer srv.Close()
	tg.dialer.route("203.0.113.8:80", srv.Listener.Addr().String())
	proxyURL, _ := url.Parse("http://user:" + testToken + "@" + tg.addr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	for _, p := range []string{"/a?x=1", "/b"} {
		resp, err := client.Post("http://allowed-http.test"+p, "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "plain "+p || resp.Header.Get("X-Host") != "allowed-http.test" {
			t.Errorf("got %q host %q", b, resp.Header.Get("X-Host"))
		}
	}
	for _, r := range got.all() {
		if r.header.Get("Proxy-Authorization") != "" || r.body != "body" {
			t.Errorf("upstream saw %+v", r)
		}
	}
	waitFor(t, func() bool { return tg.Stats().Allowed == 2 })
}

// TestSlowClient: a client that never finishes its request head is cut off
// with 408 while other clients are served.
func TestSlowClient(t *testing.T) {
	tg := startGateway(t, Config{Allow: proxyAllow, Limits: Limits{HeaderTimeout: Duration(300 * time.Millisecond)}}, proxyNames, nil)
	c, err := net.Dial("tcp", tg.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT allowed.test:443 HTTP/1.1\r\nX-Slow: ")
	tg.healthy(t)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("%s, want 408", resp.Status)
	}
	tg.healthy(t)
}

// TestMaxConns: one connection over the limit is answered 503.
func TestMaxConns(t *testing.T) {
	tg := startGateway(t, Config{Limits: Limits{MaxConns: 2}}, nil, nil)
	for range 2 {
		c, err := net.Dial("tcp", tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET "+HealthPath+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("held connection: %v %v", resp, err)
		}
	}
	resp, err := http.Get("http://" + tg.addr + HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("third connection: %s, want 503", resp.Status)
	}
}

// TestTunnelIdle: a tunnel that moves nothing is closed after IdleTimeout,
// over TCP and over the unix socket the sandbox uses.
func TestTunnelIdle(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			tg := startGateway(t, Config{Allow: proxyAllow, Limits: Limits{IdleTimeout: Duration(200 * time.Millisecond)}}, proxyNames, nil)
			tg.dialer.route("203.0.113.7:443", echoServer(t))
			addr := tg.addr
			if network == "unix" {
				addr = tg.serveUnix(t)
			}
			c := connectVia(t, network, addr, "allowed.test:443")
			io.WriteString(c, "x\n")
			br := bufio.NewReader(c)
			if l, _ := br.ReadString('\n'); l != "x\n" {
				t.Fatalf("echo %q", l)
			}
			if _, err := br.ReadByte(); err == nil {
				t.Fatal("the idle tunnel sent data")
			}
			waitFor(t, func() bool { return tg.Stats().Allowed == 1 })
		})
	}
}

func (tg *testGateway) serveUnix(t *testing.T) string {
	path := t.TempDir() + "/gw.sock"
	l, err := ListenUnix(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = tg.Serve(l) }()
	return path
}

func echoServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return l.Addr().String()
}

func connect(t *testing.T, gw, target string) net.Conn { return connectVia(t, "tcp", gw, target) }

// connectVia opens a CONNECT tunnel through the gateway and returns it.
func connectVia(t *testing.T, network, gw, target string) net.Conn {
	t.Helper()
	c, err := net.Dial(network, gw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %v %v", target, resp, err)
	}
	if br.Buffered() > 0 {
		t.Fatal("data after the 200")
	}
	return c
}

// waitFor polls cond until it holds; the test's own deadline bounds it.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(5 * time.Millisecond)
	}
}
