package netpolicy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// flood sends n CONNECT requests for target(i), 8 at a time, and checks
// that each is refused.
func (tg *testGateway) flood(t *testing.T, n int, target func(i int) string) {
	t.Helper()
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if status := tg.connectStatus(target(i)); status < 400 {
					t.Errorf("request %d (%.40s…): status %d, want a refusal", i, target(i), status)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// connectStatus sends one raw request line ("CONNECT x:443" or "GET /path")
// and returns the answer's status, or 0.
func (tg *testGateway) connectStatus(line string) int {
	c, err := net.Dial("tcp", tg.addr)
	if err != nil {
		return 0
	}
	defer c.Close()
	if !strings.Contains(line, " ") {
		line = "CONNECT " + line
	}
	if _, err := io.WriteString(c, line+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLogRepeatsAggregated: a flood of one denial writes it once and then a
// count line, not one line per request; the counters see every request.
func TestLogRepeatsAggregated(t *testing.T) {
	tg := startGateway(t, Config{Limits: Limits{LogRepeatWindow: Duration(time.Hour)}}, nil, nil)
	const n = 1000
	tg.flood(t, n, func(int) string { return "evil.test:443" })
	if got := len(tg.log.decisions(t)); got != 1 {
		t.Fatalf("%d lines while the window is open, want 1:\n%.2000s", got, tg.log)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	ds := tg.log.decisions(t)
	if len(ds) != 2 || ds[0].Repeated != 0 || ds[1].Repeated != n-1 || ds[1].Target != "evil.test:443" || ds[1].Decision != Deny {
		t.Fatalf("log after Close, want the first denial and a count of %d:\n%s", n-1, tg.log)
	}
	if s := tg.Stats(); s.Denied != n || s.LogDropped != 0 {
		t.Errorf("stats %+v, want %d denials", s, n)
	}
}

// TestLogRepeatWindowCloses: the count line comes out when the window ends,
// without waiting for Close, and the next denial starts a new window.
func TestLogRepeatWindowCloses(t *testing.T) {
	tg := startGateway(t, Config{Limits: Limits{LogRepeatWindow: Duration(20 * time.Millisecond)}}, nil, nil)
	for range 3 {
		tg.connectStatus("evil.test:443")
	}
	waitFor(t, func() bool {
		ds := tg.log.decisions(t)
		return len(ds) >= 2 && ds[len(ds)-1].Repeated > 0
	})
	tg.connectStatus("evil.test:443")
	waitFor(t, func() bool { return tg.Stats().Denied == 4 })
	var full, repeated uint64
	for _, d := range tg.log.decisions(t) {
		if d.Repeated > 0 {
			repeated += d.Repeated
		} else {
			full++
		}
	}
	if full+repeated != 4 || full < 2 {
		t.Errorf("%d full lines and %d repeats for 4 denials across two windows:\n%s", full, repeated, tg.log)
	}
}

// TestLogFloodCapped: a flood of distinct denials, some with huge targets,
// keeps the log under its byte cap and every line under the line cap; the
// log says when it reached the cap and how much it dropped, and the
// counters stay exact.
func TestLogFloodCapped(t *testing.T) {
	const maxBytes, maxLine = 64 << 10, 512
	tg := startGateway(t, Config{Limits: Limits{LogMaxBytes: maxBytes, LogMaxLine: maxLine}}, nil, nil)
	const n = 1500
	long := strings.Repeat("\x01<é>", 4000)
	tg.flood(t, n, func(i int) string {
		if i%10 == 0 {
			return "GET /" + long + fmt.Sprint(i) // 404 naming the huge route
		}
		return fmt.Sprintf("evil-%d.test:443", i)
	})
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	raw := tg.log.String()
	if len(raw) > maxBytes {
		t.Errorf("the log is %d bytes, over its cap of %d", len(raw), maxBytes)
	}
	for i, line := range strings.SplitAfter(raw, "\n") {
		if len(line) > maxLine {
			t.Errorf("line %d is %d bytes, over %d: %.200s", i, len(line), maxLine, line)
		}
	}
	ds := tg.log.decisions(t)
	last := ds[len(ds)-1]
	if last.Kind != KindLog || last.Dropped == nil {
		t.Fatalf("the last line does not say what was dropped: %+v", last)
	}
	notes, written := 0, uint64(0)
	for _, d := range ds {
		if d.Kind == KindLog {
			notes++
			continue
		}
		written += 1 + d.Repeated
	}
	if notes != 2 {
		t.Errorf("%d log notes, want the cap note and the final one", notes)
	}
	s := tg.Stats()
	if s.Denied != n || written+last.Dropped.Denied != n || s.LogDropped != last.Dropped.Denied || last.Dropped.Denied == 0 {
		t.Errorf("stats %+v, %d written, dropped %+v: want %d denials, all accounted for", s, written, *last.Dropped, n)
	}
}

// TestLogLineCut: encode cuts a long reason, then a long target, on a rune
// boundary, whatever JSON escaping does to their length.
func TestLogLineCut(t *testing.T) {
	l := newDecisionLog(nil, "run-x", Limits{LogMaxLine: 512})
	for _, d := range []Decision{
		{Kind: "model", Target: "t", Reason: strings.Repeat("é", 5000)},
		{Kind: "model", Target: strings.Repeat("\x00", 5000), Reason: strings.Repeat("<", 5000)},
		{Kind: "model", Target: strings.Repeat("\xff", 5000)},
	} {
		b := l.encode(d)
		if len(b) > 512 || !strings.HasSuffix(string(b), "}\n") {
			t.Errorf("%d bytes: %.120q", len(b), b)
		}
		if !strings.Contains(string(b), logEllipsis) {
			t.Errorf("the cut is not marked: %.120q", b)
		}
	}
}

// TestOnDenySeesEveryRefusal: WithOnDeny's callback gets each refusal as
// it is decided, the repeats the log collapses included, and no allow.
func TestOnDenySeesEveryRefusal(t *testing.T) {
	var buf syncBuffer
	var got []Decision
	g, err := New(Config{RunID: "run-x", Token: testToken, Limits: Limits{LogRepeatWindow: Duration(time.Minute)}},
		WithLogWriter(&buf), WithOnDeny(func(d Decision) { got = append(got, d) }))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for range 3 {
		g.log.record(Decision{Kind: "connect", Target: "evil.test:443", Reason: "not allowed"}, now)
	}
	g.log.record(Decision{Kind: "model", Target: "openai", Decision: Allow}, now)
	if len(got) != 3 || got[0].Decision != Deny || got[0].Target != "evil.test:443" || got[0].RunID != "run-x" {
		t.Errorf("onDeny saw %+v: want the 3 refusals, with their run id", got)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 2 {
		t.Errorf("the log has %d lines, want the first refusal and the allow (repeats collapsed):\n%s", lines, buf.String())
	}
}
