package netpolicy

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is what a fake upstream received.
type seen struct {
	mu   sync.Mutex
	reqs []seenReq
}

type seenReq struct {
	method, path, query string
	header              http.Header
	body                string
}

func (s *seen) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, seenReq{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), string(b)})
}

func (s *seen) all() []seenReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenReq(nil), s.reqs...)
}

// tlsUpstream starts a fake model server with a certificate from a CA made
// for the test, and returns its port and CA file.
func tlsUpstream(t *testing.T, h http.HandlerFunc, http2 bool) (port string, caFile string) {
	t.Helper()
	ca := newTestCA(t, "upstream.test")
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf}}
	srv.EnableHTTP2 = http2
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, ca.pemFile
}

func modelRequest(t *testing.T, addr, method, path, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestTokenSwap: the real key reaches the upstream, the per-run token never
// does, over TLS verified against the test CA.
func TestTokenSwap(t *testing.T) {
	var got seen
	port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		got.record(r)
		io.WriteString(w, `{"ok":true}`)
	}, false)
	cfg := Config{Upstreams: map[string]Upstream{
		"openai":    {URL: "https://upstream.test:" + port, CAFile: caFile},
		"anthropic": {URL: "https://upstream.test:" + port + "/base/", CAFile: caFile},
	}}
	env := map[string]string{"OPENAI_API_KEY": "sk-real-openai", "ANTHROPIC_API_KEY": "sk-ant-real"}
	tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, env)

	resp := modelRequest(t, tg.addr, "POST", "/openai/v1/responses?stream=false", `{"model":"gpt-x"}`, map[string]string{
		"Authorization": "Bearer " + testToken, "X-Trace": "carries " + testToken, "Connection": "X-Hop", "X-Hop": "1",
	})
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != `{"ok":true}` {
		t.Fatalf("openai: %s %s", resp.Status, b)
	}
	resp = modelRequest(t, tg.addr, "POST", "/anthropic/v1/messages", `{}`, map[string]string{
		"X-Api-Key": testToken, "Anthropic-Version": "2023-06-01",
	})
	if resp.StatusCode != 200 {
		t.Fatalf("anthropic: %s", resp.Status)
	}

	reqs := got.all()
	if len(reqs) != 2 {
		t.Fatalf("upstream saw %d requests, want 2", len(reqs))
	}
	o, a := reqs[0], reqs[1]
	if o.path != "/v1/responses" || o.query != "stream=false" || o.body != `{"model":"gpt-x"}` {
		t.Errorf("openai request: %s ?%s %q", o.path, o.query, o.body)
	}
	if o.header.Get("Authorization") != "Bearer sk-real-openai" {
		t.Errorf("openai Authorization = %q, want the real key", o.header.Get("Authorization"))
	}
	if a.path != "/base/v1/messages" || a.header.Get("X-Api-Key") != "sk-ant-real" || a.header.Get("Authorization") != "" {
		t.Errorf("anthropic request: path %s, x-api-key %q, authorization %q", a.path, a.header.Get("X-Api-Key"), a.header.Get("Authorization"))
	}
	if a.header.Get("Anthropic-Version") != "2023-06-01" {
		t.Error("an end-to-end header was not forwarded")
	}
	if o.header.Get("X-Hop") != "" {
		t.Error("a header named by Connection was forwarded")
	}
	for _, r := range reqs {
		for name, vs := range r.header {
			for _, v := range vs {
				if strings.Contains(v, testToken) {
					t.Errorf("the upstream received the token in %s", name)
				}
			}
		}
	}
	waitFor(t, func() bool { return tg.Stats().Allowed == 2 })
	if strings.Contains(tg.log.String(), "sk-") || strings.Contains(tg.log.String(), testToken) {
		t.Errorf("a secret reached the decision log:\n%s", tg.log)
	}
	if s := tg.Stats(); s.Denied != 0 {
		t.Errorf("stats %+v, want no denial", s)
	}
}

// TestTokenRefused: a missing, wrong or revoked token never reaches the
// upstream.
func TestTokenRefused(t *testing.T) {
	var got seen
	port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) { got.record(r) }, false)
	cfg := Config{Upstreams: map[string]Upstream{"openai": {URL: "https://upstream.test:" + port, CAFile: caFile}}}
	tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, map[string]string{"OPENAI_API_KEY": "sk-real"})
	for _, hdr := range []map[string]string{
		nil,
		{"Authorization": "Bearer wrong"},
		{"Authorization": "Bearer " + testToken + "x"},
		{"Authorization": "Basic " + testToken},
		{"X-Api-Key": testToken[:len(testToken)-1]},
	} {
		if resp := modelRequest(t, tg.addr, "GET", "/openai/v1/models", "", hdr); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("headers %v: %s, want 401", hdr, resp.Status)
		}
	}
	tg.Revoke()
	if resp := modelRequest(t, tg.addr, "GET", "/openai/v1/models", "", map[string]string{"Authorization": "Bearer " + testToken}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after Revoke: %s, want 401", resp.Status)
	}
	if n := len(got.all()); n != 0 {
		t.Errorf("the upstream saw %d requests", n)
	}
	for _, d := range tg.log.decisions(t) {
		if d.Decision != Deny || d.Status != http.StatusUnauthorized || d.RunID != "run-test" {
			t.Errorf("log line %+v", d)
		}
	}
}

// TestSSEUnbuffered: the upstream sends the next event only after the agent
// has received the previous one, so any buffering in the gateway would
// deadlock this test (bounded by a context, not a timing assertion).
func TestSSEUnbuffered(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		ack := make(chan struct{})
		port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 5 {
				io.WriteString(w, "data: event "+string(rune('0'+i))+"\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-ack:
				case <-r.Context().Done():
					return
				}
			}
		}, h2)
		cfg := Config{Upstreams: map[string]Upstream{"openai": {URL: "https://upstream.test:" + port, CAFile: caFile}}}
		tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+tg.addr+"/openai/v1/responses", strings.NewReader(`{"stream":true}`))
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		for i := range 5 {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("http2=%v: event %d: %v (a buffered event never arrived)", h2, i, err)
			}
			if want := "data: event " + string(rune('0'+i)) + "\n"; line != want {
				t.Fatalf("event %d = %q, want %q", i, line, want)
			}
			br.ReadString('\n')
			ack <- struct{}{}
		}
		resp.Body.Close()
		cancel()
	}
}

// TestModelRestriction: only listed models pass, and no spelling of the body
// can make the upstream read another model than the gateway checked.
func TestModelRestriction(t *testing.T) {
	var got seen
	port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) { got.record(r) }, false)
	cfg := Config{Upstreams: map[string]Upstream{"local": {URL: "https://upstream.test:" + port, CAFile: caFile, Models: []string{"small"}}}}
	tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, nil)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	tests := []struct {
		body   string
		hdr    map[string]string
		status int
	}{
		{`{"model":"small","input":"hi"}`, nil, 200},
		{`{"input":"no model"}`, nil, 200},
		{``, nil, 200},
		{`{"model":"big"}`, nil, 403},
		{`{"model":"small","model":"big"}`, nil, 403},
		{`{"model":"small","MODEL":"big"}`, nil, 403},
		{`{"mod\u0065l":"big"}`, nil, 403},
		{`{"model":["small"]}`, nil, 403},
		{`["small"]`, nil, 403},
		{`{"model":"small"} {"model":"big"}`, nil, 403},
		{`not json`, nil, 403},
		{`{"model":"small"}`, map[string]string{"Content-Encoding": "gzip"}, 403},
	}
	for _, tt := range tests {
		hdr := map[string]string{"Authorization": auth["Authorization"]}
		for k, v := range tt.hdr {
			hdr[k] = v
		}
		resp := modelRequest(t, tg.addr, "POST", "/local/v1/chat/completions", tt.body, hdr)
		if resp.StatusCode != tt.status {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("body %s: %s %s, want %d", tt.body, resp.Status, b, tt.status)
		}
	}
	for _, r := range got.all() {
		if strings.Contains(r.body, "big") {
			t.Errorf("the upstream received %q", r.body)
		}
	}
	if n := len(got.all()); n != 3 {
		t.Errorf("the upstream saw %d requests, want 3", n)
	}
}

// TestModelRoutePaths: unknown routes and paths that could climb out of the
// upstream's base path are refused before the token even matters.
func TestModelRoutePaths(t *testing.T) {
	var got seen
	port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) { got.record(r) }, false)
	cfg := Config{Upstreams: map[string]Upstream{"openai": {URL: "https://upstream.test:" + port + "/v1", CAFile: caFile}}}
	tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, nil)
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/nope/v1/x", 404},
		{"/openaix/v1/x", 404},
		{"/openai/../admin", 400},
		{"/openai/a/%2e%2e/b", 400},
		{"/openai/a%2fb", 400},
		{"/openai/ok", 200},
	} {
		resp := tg.rawRequest(t, "GET "+tt.path+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+testToken+"\r\n\r\n")
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %s, want %d", tt.path, resp.Status, tt.status)
		}
	}
	if r := got.all(); len(r) != 1 || r[0].path != "/v1/ok" {
		t.Errorf("upstream saw %+v", r)
	}
}

// TestBuiltinUpstreamChecked: the built-in URLs are held to the proxy's
// address rules, so a hostile resolver cannot point them into the host.
func TestBuiltinUpstreamChecked(t *testing.T) {
	tg := startGateway(t, Config{}, map[string][]string{"api.openai.com": {"127.0.0.1"}}, map[string]string{"OPENAI_API_KEY": "sk-real"})
	resp := modelRequest(t, tg.addr, "GET", "/openai/v1/models", "", map[string]string{"Authorization": "Bearer " + testToken})
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("%s, want 502", resp.Status)
	}
	if d := tg.dialer.asked(); len(d) != 0 {
		t.Errorf("the gateway dialed %v", d)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "loopback") {
		t.Errorf("reason %q does not say why", b)
	}
}

// TestCloseEndsStreams: Close returns while a stream is open and silent,
// and the agent's stream ends.
func TestCloseEndsStreams(t *testing.T) {
	port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}, false)
	cfg := Config{Upstreams: map[string]Upstream{"openai": {URL: "https://upstream.test:" + port, CAFile: caFile}}}
	tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, nil)
	resp := modelRequest(t, tg.addr, "POST", "/openai/v1/responses", `{}`, map[string]string{"Authorization": "Bearer " + testToken})
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "data: first\n" {
		t.Fatalf("first event %q %v", line, err)
	}
	if err := tg.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := io.ReadAll(br); err == nil {
		t.Error("the stream ended cleanly although the gateway closed mid-stream")
	}
}

// TestModelMethods: a model route forwards only GET, POST and DELETE; any
// other method, TRACE first, is refused with 405 and logged, and the
// upstream never sees it nor the key.
func TestModelMethods(t *testing.T) {
	var got seen
	port, caFile := tlsUpstream(t, func(w http.ResponseWriter, r *http.Request) { got.record(r) }, false)
	cfg := Config{Upstreams: map[string]Upstream{"openai": {URL: "https://upstream.test:" + port, CAFile: caFile}}}
	tg := startGateway(t, cfg, map[string][]string{"upstream.test": {"127.0.0.1"}}, map[string]string{"OPENAI_API_KEY": "sk-real-method-key"})
	for _, m := range []string{"TRACE", "PUT", "PATCH", "OPTIONS", "HEAD", "PROPFIND", "TRACK", "get"} {
		resp := tg.rawRequest(t, m+" /openai/v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+testToken+"\r\nContent-Length: 0\r\n\r\n")
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST, DELETE" {
			t.Errorf("%s: %s, Allow %q; want 405 and GET, POST, DELETE", m, resp.Status, resp.Header.Get("Allow"))
		}
	}
	if r := got.all(); len(r) != 0 {
		t.Errorf("the upstream saw %d refused requests, the first %s with Authorization %q", len(r), r[0].method, r[0].header.Get("Authorization"))
	}
	denied := tg.Stats().Denied
	for _, m := range []string{"GET", "POST", "DELETE"} {
		if resp := modelRequest(t, tg.addr, m, "/openai/v1/files/f1", "", map[string]string{"Authorization": "Bearer " + testToken}); resp.StatusCode != 200 {
			t.Errorf("%s: %s", m, resp.Status)
		}
	}
	if r := got.all(); len(r) != 3 || r[2].method != "DELETE" || r[2].header.Get("Authorization") != "Bearer sk-real-method-key" {
		t.Errorf("the upstream saw %+v", r)
	}
	if denied != 8 {
		t.Errorf("%d denials counted, want 8", denied)
	}
	tg.Close()
	for _, d := range tg.log.decisions(t) {
		if d.Status == http.StatusMethodNotAllowed && !strings.Contains(d.Reason, "GET, POST, DELETE") {
			t.Errorf("log line without the reason: %+v", d)
		}
	}
}
