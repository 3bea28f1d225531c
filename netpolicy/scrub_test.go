package netpolicy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// echoKey is the real key of the echo tests. Its "~?>" bytes make the
// standard and URL base64 alphabets differ, at every alignment.
const echoKey = "sk-echo~?>~?>-0123456789abcdefXYZ"

// reflections are the ways an upstream that echoes the key sends it back.
func reflections(key string) []string {
	out := []string{key, "Bearer " + key}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(key)))
		for _, user := range []string{"", "u", "us", "user", "Bearer "} {
			out = append(out, enc.EncodeToString([]byte(user+":"+key)), enc.EncodeToString([]byte(user+key+":x")))
		}
	}
	return append(out, "Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+key)))
}

// leaks says how s still carries key, judged independently of the
// scrubber's own forms: the key less two bytes at each end in plain text,
// or in what any run of base64 characters in s decodes to, from any of
// the four starting offsets (an encoding that was overwritten can leave at
// most two bytes of the key at each end of it intact).
func leaks(s, key string) []string {
	inner := key[2 : len(key)-2]
	var found []string
	if strings.Contains(s, inner) {
		found = append(found, "plain")
	}
	isB64 := func(r rune) bool {
		return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("+/-_", r)
	}
	runs := strings.FieldsFunc(s, func(r rune) bool { return !isB64(r) })
	for _, run := range runs {
		run = strings.NewReplacer("-", "+", "_", "/").Replace(run)
		for off := 0; off < 4 && off < len(run); off++ {
			seg := run[off:]
			if len(seg)%4 == 1 {
				seg = seg[:len(seg)-1]
			}
			dec, err := base64.RawStdEncoding.DecodeString(seg)
			if err == nil && strings.Contains(string(dec), inner) {
				found = append(found, "base64 in "+run)
			}
		}
	}
	return found
}

// TestScrubForms: every reflection of the key is overwritten, in place and
// at the same length.
func TestScrubForms(t *testing.T) {
	s := newScrubber(echoKey)
	for _, r := range reflections(echoKey) {
		if len(leaks(r, echoKey)) == 0 {
			t.Fatalf("leaks does not see the key in %q", r)
		}
		b := []byte("<<" + r + ">>")
		n := s.scrub(b)
		if n == 0 || len(b) != len(r)+4 || !strings.Contains(string(b), ScrubMarker[:8]) {
			t.Errorf("%q: %d copies, now %q", r, n, b)
		}
		if l := leaks(string(b), echoKey); len(l) > 0 {
			t.Errorf("%q still holds %q", b, l)
		}
	}
	if newScrubber("short-key") != nil {
		t.Error("a key under minScrubLen would scrub ordinary text")
	}
}

// TestScrubStreamSplits: a copy split between two reads at any byte is
// still found, and the bytes before it are not held back.
func TestScrubStreamSplits(t *testing.T) {
	s := newScrubber(echoKey)
	for _, r := range reflections(echoKey) {
		whole := "data: " + r + "\n\n"
		want := []byte(whole)
		s.scrub(want)
		for cut := 1; cut < len(whole); cut++ {
			st := s.stream()
			var out []byte
			for i, part := range []string{whole[:cut], whole[cut:]} {
				data := append(append([]byte(nil), st.held...), part...)
				keep := st.next(data, i == 1)
				out = append(out, data[:len(data)-keep]...)
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("%q cut at %d: %q, want %q", r, cut, out, want)
			}
		}
	}
	st := s.stream()
	if keep := st.next([]byte("data: event\n\n"), false); keep != 0 {
		t.Errorf("an event that cannot start a key held back %d bytes", keep)
	}
}

// echoUpstream answers as a hostile upstream would: it sends the key it
// received back in headers and in the body. On /split each reflection is
// sent in two halves, the second only once the agent has received what
// came before the first, so that the gateway reads the halves separately.
func echoUpstream(t *testing.T, ack chan struct{}) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		w.Header().Set("Set-Cookie", "k="+base64.URLEncoding.EncodeToString([]byte(key)))
		w.Header().Set("Location", "https://x.test/?auth=Basic+"+base64.StdEncoding.EncodeToString([]byte("user:"+key)))
		switch r.URL.Path {
		case "/split":
			for i, f := range reflections(key) {
				fmt.Fprintf(w, "#%d:%s", i, f[:len(f)/2])
				w.(http.Flusher).Flush()
				select {
				case <-ack:
				case <-r.Context().Done():
					return
				}
				fmt.Fprintf(w, "%s\n", f[len(f)/2:])
				w.(http.Flusher).Flush()
			}
		case "/length":
			body := strings.Join(reflections(key), "\n")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			for i := 0; i < len(body); i += 7 {
				io.WriteString(w, body[i:min(i+7, len(body))])
				w.(http.Flusher).Flush()
			}
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, strings.Join(reflections(key), "\n"))
			zw.Close()
		case "/brotli":
			w.Header().Set("Content-Encoding", "br")
			io.WriteString(w, key)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestReflectedKeyScrubbed: an upstream that echoes the real key, in
// headers and in a body streamed so that copies straddle reads, never gets
// it back to the agent; the log says copies were scrubbed.
func TestReflectedKeyScrubbed(t *testing.T) {
	ack := make(chan struct{})
	url := echoUpstream(t, ack)
	cfg := Config{Upstreams: map[string]Upstream{"echo": {URL: url, KeyEnv: "ECHO_KEY"}}}
	tg := startGateway(t, cfg, nil, map[string]string{"ECHO_KEY": echoKey})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	get := func(path string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+tg.addr+"/echo"+path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Accept-Encoding", "gzip") // the agent's wish must not let a gzip body pass unsearched
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	checkHeaders := func(resp *http.Response) {
		var all strings.Builder
		resp.Header.Write(&all)
		if l := leaks(all.String(), echoKey); len(l) > 0 {
			t.Errorf("headers carry the key as %q:\n%s", l, all.String())
		}
		if !strings.Contains(resp.Header.Get("X-Echo"), ScrubMarker[:8]) {
			t.Errorf("X-Echo %q has no marker", resp.Header.Get("X-Echo"))
		}
	}

	resp := get("/split")
	checkHeaders(resp)
	var body bytes.Buffer
	br := bufio.NewReader(resp.Body)
	for i := range reflections(echoKey) {
		for !strings.HasSuffix(body.String(), fmt.Sprintf("#%d:", i)) {
			c, err := br.ReadByte()
			if err != nil {
				t.Fatalf("reading up to reflection %d: %v (the gateway held back more than a key's start)\n%s", i, err, body.String())
			}
			body.WriteByte(c)
		}
		ack <- struct{}{}
	}
	rest, _ := io.ReadAll(br)
	body.Write(rest)
	if l := leaks(body.String(), echoKey); len(l) > 0 {
		t.Errorf("the split body carries the key as %q:\n%s", l, body.String())
	}
	if n := strings.Count(body.String(), "\n"); n != len(reflections(echoKey)) {
		t.Errorf("the body has %d lines, want %d:\n%s", n, len(reflections(echoKey)), body.String())
	}

	for _, path := range []string{"/length", "/gzip"} {
		resp := get(path)
		checkHeaders(resp)
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%s: %v, Content-Encoding %q", path, err, resp.Header.Get("Content-Encoding"))
		}
		if l := leaks(string(b), echoKey); len(l) > 0 || !strings.Contains(string(b), ScrubMarker[:8]) {
			t.Errorf("%s: the body carries the key as %q:\n%s", path, l, b)
		}
		if want := len(strings.Join(reflections(echoKey), "\n")); len(b) != want || path == "/length" && resp.ContentLength != int64(want) {
			t.Errorf("%s: %d bytes (Content-Length %d), want %d", path, len(b), resp.ContentLength, want)
		}
	}
	if resp := get("/brotli"); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("/brotli: %s, want 502 (a body the gateway cannot search)", resp.Status)
	}

	tg.Close()
	scrubbed := 0
	for _, d := range tg.log.decisions(t) {
		scrubbed += d.Scrubbed
		if d.Scrubbed > 0 && !strings.Contains(d.Reason, "real key back") {
			t.Errorf("a scrub without a reason: %+v", d)
		}
	}
	if scrubbed == 0 {
		t.Error("the log does not say the key was scrubbed")
	}
	if strings.Contains(tg.log.String(), echoKey) {
		t.Error("the key reached the decision log")
	}
}

// TestReflectedKeyInError: an upstream that puts the key where the
// transport quotes it in an error (a malformed status line) does not get
// it into the refusal the agent reads, nor into the log.
func TestReflectedKeyInError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(c).ReadString('\n')
			io.WriteString(c, "HTTP/1.1 "+echoKey+" OK\r\n\r\n")
			c.Close()
		}
	}()
	cfg := Config{Upstreams: map[string]Upstream{"echo": {URL: "http://" + l.Addr().String(), KeyEnv: "ECHO_KEY"}}}
	tg := startGateway(t, cfg, nil, map[string]string{"ECHO_KEY": echoKey})
	resp := modelRequest(t, tg.addr, "GET", "/echo/v1/models", "", map[string]string{"Authorization": "Bearer " + testToken})
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadGateway || strings.Contains(string(b), echoKey) || strings.Contains(resp.Header.Get("X-Agentbox-Refusal"), echoKey) {
		t.Errorf("%s %q", resp.Status, b)
	}
	tg.Close()
	if strings.Contains(tg.log.String(), echoKey) {
		t.Errorf("the key reached the decision log:\n%s", tg.log)
	}
}
