package netpolicy

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipeConn is a net.Conn that reads a fixed input and collects the output;
// deadlines are ignored. The fuzz target drives the gateway through it with
// no socket at all.
type pipeConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *pipeConn) Read(p []byte) (int, error)       { return c.in.Read(p) }
func (c *pipeConn) Write(p []byte) (int, error)      { return c.out.Write(p) }
func (c *pipeConn) Close() error                     { return nil }
func (c *pipeConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *pipeConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *pipeConn) SetDeadline(time.Time) error      { return nil }
func (c *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// refusingDialer records what it is asked and connects to nothing.
type refusingDialer struct {
	mu     sync.Mutex
	dialed []string
}

func (d *refusingDialer) DialContext(_ context.Context, _, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dialed = append(d.dialed, addr)
	return nil, errors.New("fuzz dialer connects nowhere")
}

// FuzzGatewayRequest feeds arbitrary bytes to a gateway connection. The
// gateway must not panic, must answer only in HTTP/1.1, and must never try
// to reach an address other than the allowlisted hosts' checked addresses
// and the explicitly named model upstream.
func FuzzGatewayRequest(f *testing.F) {
	seeds := []string{
		"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
		"CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n",
		"CONNECT [::ffff:7f00:1]:443 HTTP/1.1\r\n\r\n",
		"CONNECT private.test:443 HTTP/1.1\r\n\r\n",
		"GET http://allowed-http.test/x HTTP/1.1\r\nHost: allowed-http.test\r\n\r\n",
		"GET http://allowed-http.test/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"POST /model/v1/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testToken + "\r\nContent-Length: 17\r\n\r\n{\"model\":\"small\"}",
		"POST /model/v1/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testToken + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n",
		"GET " + HealthPath + " HTTP/1.1\r\nHost: x\r\n\r\nGET " + HealthPath + " HTTP/1.0\r\n\r\n",
		"GET /openai/../x HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n",
		"\r\n\r\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	names := map[string][]string{
		"allowed.test": {"203.0.113.7"}, "allowed-http.test": {"203.0.113.8"},
		"private.test": {"10.0.0.1"}, "model.test": {"127.0.0.1"},
	}
	allowedDials := map[string]bool{"203.0.113.7:443": true, "203.0.113.8:80": true, "127.0.0.1:9": true}
	f.Fuzz(func(t *testing.T, in []byte) {
		d := &refusingDialer{}
		cfg := Config{
			Token: testToken, Allow: []string{"allowed.test:443", "allowed-http.test:80", "private.test:443"},
			Upstreams: map[string]Upstream{"model": {URL: "http://model.test:9", Models: []string{"small"}}},
			Limits:    Limits{MaxHeaderBytes: 4096, MaxBodyBytes: 4096},
		}
		g, err := New(cfg, WithResolver(newTestResolver(names)), WithDialer(d), WithGetenv(func(string) string { return "" }))
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		c := &pipeConn{in: bytes.NewReader(in)}
		g.serveConn(c)
		if out := c.out.String(); out != "" && !strings.HasPrefix(out, "HTTP/1.1 ") {
			t.Errorf("answer does not start with HTTP/1.1: %q", out)
		}
		for _, a := range d.dialed {
			if !allowedDials[a] {
				t.Errorf("the gateway tried to reach %s", a)
			}
		}
	})
}

// FuzzParseHost: whatever ParseHost calls a name has only DNS characters and
// no numeric last label, so no address spelling can pass as a name.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "0x7f.1", "example.com", "[::1]", "a.0x", "1.2.3.4.5", "ex.1a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		name, addr, err := ParseHost(host)
		if err != nil || name == "" {
			if err == nil && !addr.IsValid() {
				t.Errorf("ParseHost(%q) returned neither a name nor an address", host)
			}
			return
		}
		labels := strings.Split(name, ".")
		if looksNumeric(labels[len(labels)-1]) {
			t.Errorf("ParseHost(%q) = name %q with a numeric last label", host, name)
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				t.Errorf("ParseHost(%q) = name %q with %q", host, name, r)
			}
		}
	})
}
