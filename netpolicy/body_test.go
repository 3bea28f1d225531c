package netpolicy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// modelUpstream is a plain-HTTP fake model server on loopback behind a
// route "local" that restricts models to "small".
func modelUpstream(t *testing.T, lim Limits) (*testGateway, *seen) {
	t.Helper()
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.record(r)
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	cfg := Config{Limits: lim, Upstreams: map[string]Upstream{"local": {URL: srv.URL, Models: []string{"small"}}}}
	return startGateway(t, cfg, nil, nil), &got
}

// stalledBody opens a connection that sends a model request head and part
// of its body, then stops. chunked sends it without a Content-Length.
func stalledBody(t *testing.T, addr string, length, sent int, chunked bool) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := "POST /local/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + testToken + "\r\n"
	part := `{"model":"small","input":"` + strings.Repeat("a", sent)
	if chunked {
		head += "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(part), part)
	} else {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", length) + part
	}
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// status reads the answer on c, or returns 0 if none came within wait.
func status(c net.Conn, wait time.Duration) (int, string) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error()
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBodyBudgetFlood: many stalled large bodies on a model-restricted
// route never make the gateway hold more than its budget; the requests
// that find no room are answered 503 at once with the reason, the stalled
// ones 408 after BodyTimeout, and their memory comes back.
func TestBodyBudgetFlood(t *testing.T) {
	const mib = 1 << 20
	lim := Limits{MaxBodyBytes: mib, MaxBufferedBytes: 4 * mib, BufferWait: Duration(100 * time.Millisecond), BodyTimeout: Duration(time.Second)}
	tg, got := modelUpstream(t, lim)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			const n = 24
			conns := make([]net.Conn, n)
			for i := range conns {
				conns[i] = stalledBody(t, tg.addr, mib, 300<<10, chunked)
			}
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			for _, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					code, body := status(c, 20*time.Second)
					mu.Lock()
					defer mu.Unlock()
					codes[code]++
					if code == http.StatusServiceUnavailable && !strings.Contains(body, "limits.max_buffered_bytes") {
						t.Errorf("503 without the reason: %q", body)
					}
				}()
			}
			wg.Wait()
			used, peak := tg.bodies.usage()
			t.Logf("answers %v, peak %d bytes", codes, peak)
			if peak > lim.MaxBufferedBytes {
				t.Errorf("the gateway held %d bytes of bodies at once, over its budget of %d", peak, lim.MaxBufferedBytes)
			}
			if codes[http.StatusServiceUnavailable] < n/2 || codes[http.StatusRequestTimeout] == 0 || codes[http.StatusServiceUnavailable]+codes[http.StatusRequestTimeout] != n {
				t.Errorf("answers %v: want most 503 (no room) and the rest 408 (stalled)", codes)
			}
			waitFor(t, func() bool { used, _ = tg.bodies.usage(); return used == 0 })
		})
	}
	if n := len(got.all()); n != 0 {
		t.Errorf("the upstream saw %d requests with incomplete bodies", n)
	}
}

// TestBodyLimits: a body over MaxBodyBytes is 413 with the reason, known
// length or not; an allowed body goes through, a refused one too comes
// back to the budget.
func TestBodyLimits(t *testing.T) {
	lim := Limits{MaxBodyBytes: 64 << 10}
	tg, got := modelUpstream(t, lim)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	big := `{"model":"small","input":"` + strings.Repeat("a", 64<<10) + `"}`
	resp := modelRequest(t, tg.addr, "POST", "/local/v1/chat/completions", big, auth)
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "limits.max_body_bytes") {
		t.Errorf("known length over the cap: %s %q", resp.Status, b)
	}
	c := stalledBody(t, tg.addr, 0, 80<<10, true)
	if code, body := status(c, 10*time.Second); code != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked over the cap: %d %q", code, body)
	}
	for _, body := range []string{`{"model":"small","input":"` + strings.Repeat("b", 60<<10) + `"}`, `{"model":"big"}`} {
		req, _ := http.NewRequest("POST", "http://"+tg.addr+"/local/v1/chat/completions", io.MultiReader(strings.NewReader(body)))
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req) // no Content-Length: chunked
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if r := got.all(); len(r) != 1 || !strings.HasPrefix(r[0].body, `{"model":"small"`) || len(r[0].body) < 60<<10 {
		t.Errorf("the upstream saw %d requests, want the whole allowed one", len(r))
	}
	waitFor(t, func() bool { used, _ := tg.bodies.usage(); return used == 0 })
}

// TestBusyRefusalsBounded: past MaxConns connections, at most MaxConns more
// wait for an answer; the rest are closed at once and counted.
func TestBusyRefusalsBounded(t *testing.T) {
	tg := startGateway(t, Config{Limits: Limits{MaxConns: 2}}, nil, nil)
	for range 2 {
		c, err := net.Dial("tcp", tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET "+HealthPath+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if code, _ := status(c, 5*time.Second); code != 200 {
			t.Fatalf("held connection: %d", code)
		}
	}
	extra := make([]net.Conn, 10)
	for i := range extra {
		c, err := net.Dial("tcp", tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		extra[i] = c
	}
	answered := 0
	for _, c := range extra {
		if code, _ := status(c, 5*time.Second); code == http.StatusServiceUnavailable {
			answered++
		}
	}
	if answered > 2 {
		t.Errorf("%d of 10 connections over the limit were held for an answer, want at most 2", answered)
	}
	waitFor(t, func() bool { return tg.Stats().Denied == 10 })
}

// TestForwardResponseHeadBounded: a destination that sends an endless
// response head is cut off with 502 instead of being read into memory.
func TestForwardResponseHeadBounded(t *testing.T) {
	tg := startGateway(t, Config{Allow: proxyAllow}, proxyNames, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Junk: " + strings.Repeat("j", 8<<10) + "\r\n"
		for range (2 << 20) / len(line) {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
		io.WriteString(c, "Content-Length: 0\r\n\r\n")
	}()
	tg.dialer.route("203.0.113.8:80", l.Addr().String())
	resp := tg.rawRequest(t, "GET http://allowed-http.test/ HTTP/1.1\r\nHost: allowed-http.test\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("%s, want 502", resp.Status)
	}
}

// TestModelNames: the in-place walk finds exactly the top-level "model"
// keys, whatever nests or hides in strings around them.
func TestModelNames(t *testing.T) {
	for _, tt := range []struct {
		body string
		want []string
		err  bool
	}{
		{`{"model":"small"}`, []string{"small"}, false},
		{` { "a" : 1 , "model" : "small" } `, []string{"small"}, false},
		{`{"x":{"model":"big"},"y":[{"model":"big"}],"model":"small"}`, []string{"small"}, false},
		{`{"a":"\"model\":\"big\"}","b":"\\","model":"small"}`, []string{"small"}, false},
		{`{"a":[1,2,{"b":"]}"}],"n":-1.5e3,"t":true,"z":null}`, nil, false},
		{`{"MoDeL":"a","model":"b"}`, []string{"a", "b"}, false},
		{`{"mod\u0065l":"big"}`, []string{"big"}, false},
		{`{}`, nil, false},
		{`{"model":1}`, nil, true},
		{`{"model":"` + strings.Repeat("m", maxModelRaw) + `"}`, nil, true},
		{`[]`, nil, true},
		{`{"model":"a"}x`, nil, true},
		{`{"model":"a",}`, nil, true},
	} {
		got, err := modelNames([]byte(tt.body))
		if (err != nil) != tt.err || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("modelNames(%.60s) = %q, %v; want %q, error %v", tt.body, got, err, tt.want, tt.err)
		}
	}
}
