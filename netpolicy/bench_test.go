package netpolicy

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/netpolicy/bridge"
)

// The benchmarks measure the gateway beside a direct loopback connection in
// the same run, interleaving the two paths op by op so that both see the
// same machine. Each path variant is a sub-benchmark:
//
//	tcp:    agent -> gateway (TCP loopback) -> upstream
//	bridge: agent -> bridge (TCP loopback) -> unix socket -> gateway -> upstream,
//	        the way a sandboxed agent reaches it
//
// scripts/gateway-bench.sh runs them and prints the summary.

// benchPath is one way from the benchmark client to the gateway.
type benchPath struct {
	name string
	addr func(b *testing.B, tg *testGateway) string // host:port the agent dials
}

var benchPaths = []benchPath{
	{"tcp", func(b *testing.B, tg *testGateway) string { return tg.addr }},
	{"bridge", func(b *testing.B, tg *testGateway) string {
		sock := filepath.Join(b.TempDir(), "gw.sock")
		l, err := ListenUnix(sock, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = tg.Serve(l) }()
		br, err := bridge.Listen(bridge.Config{Socket: sock, Addrs: []string{"127.0.0.1"}})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = br.Serve(ctx) }()
		b.Cleanup(cancel)
		return "127.0.0.1:" + strconv.Itoa(br.Port())
	}},
}

// latencies collects one duration per op and reports percentiles.
type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(int(p*float64(len(s))), len(s)-1)]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkGatewayRequest: one small model request per op through each path,
// keep-alive on both sides. Reports the median and p99 latency of the direct
// and gateway requests and the median added by the gateway.
// benchKey gives the model routes a real key, as in use, so that the
// benchmarks include swapping it in and scrubbing it from what comes back.
var benchKey = map[string]string{"OPENAI_API_KEY": "sk-bench-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH"}

func BenchmarkGatewayRequest(b *testing.B) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"resp_1","output":"ok"}`)
	}))
	defer upstream.Close()
	for _, path := range benchPaths {
		b.Run(path.name, func(b *testing.B) {
			tg := startGateway(b, Config{Upstreams: map[string]Upstream{"openai": {URL: upstream.URL}}}, nil, benchKey)
			gw := path.addr(b, tg)
			direct, via := &http.Client{Transport: &http.Transport{}}, &http.Client{Transport: &http.Transport{}}
			body := `{"model":"m","input":"` + strings.Repeat("x", 512) + `"}`
			do := func(c *http.Client, url string) time.Duration {
				req, _ := http.NewRequest("POST", url, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+testToken)
				start := time.Now()
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: %s", url, resp.Status)
				}
				return time.Since(start)
			}
			do(direct, upstream.URL+"/v1/responses")
			do(via, "http://"+gw+"/openai/v1/responses")
			var d, g latencies
			b.ResetTimer()
			for b.Loop() {
				d = append(d, do(direct, upstream.URL+"/v1/responses"))
				g = append(g, do(via, "http://"+gw+"/openai/v1/responses"))
			}
			b.ReportMetric(us(d.pct(0.5)), "direct-p50-µs")
			b.ReportMetric(us(g.pct(0.5)), "gateway-p50-µs")
			b.ReportMetric(us(g.pct(0.5)-d.pct(0.5)), "added-p50-µs")
			b.ReportMetric(us(g.pct(0.99)-d.pct(0.99)), "added-p99-µs")
		})
	}
}

// sseUpstream streams one event per value received on its channel; each
// event carries the time it was written, in nanoseconds.
func sseUpstream(b *testing.B, next chan struct{}) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		for {
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "data: %d\n\n", time.Now().UnixNano())
			w.(http.Flusher).Flush()
		}
	}))
}

// sseStream opens a stream and returns a func that asks for one event and
// returns how long it took from the upstream's write to the agent's read.
func sseStream(b *testing.B, url string, next chan struct{}) func() time.Duration {
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"stream":true}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	return func() time.Duration {
		next <- struct{}{}
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		br.ReadString('\n')
		ns, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "data: ")), 10, 64)
		if err != nil {
			b.Fatalf("event %q: %v", line, err)
		}
		return time.Since(time.Unix(0, ns))
	}
}

// BenchmarkGatewaySSE: one server-sent event per op on a direct stream and
// on a stream through the gateway. Reports the delay from the upstream's
// write to the agent's read, and what the gateway adds at p50 and p99.
func BenchmarkGatewaySSE(b *testing.B) {
	for _, path := range benchPaths {
		b.Run(path.name, func(b *testing.B) {
			nd, ng := make(chan struct{}), make(chan struct{})
			ud, ug := sseUpstream(b, nd), sseUpstream(b, ng)
			b.Cleanup(ud.Close) // after the streams, which close first
			b.Cleanup(ug.Close)
			tg := startGateway(b, Config{Upstreams: map[string]Upstream{"openai": {URL: ug.URL}}}, nil, benchKey)
			direct := sseStream(b, ud.URL+"/v1/responses", nd)
			via := sseStream(b, "http://"+path.addr(b, tg)+"/openai/v1/responses", ng)
			var d, g latencies
			b.ResetTimer()
			for b.Loop() {
				d = append(d, direct())
				g = append(g, via())
			}
			b.ReportMetric(us(d.pct(0.5)), "direct-p50-µs")
			b.ReportMetric(us(g.pct(0.5)), "gateway-p50-µs")
			b.ReportMetric(us(g.pct(0.99)), "gateway-p99-µs")
			b.ReportMetric(us(g.pct(0.99)-d.pct(0.99)), "added-p99-µs")
		})
	}
}

const bulkBlock = 4 << 20

// bulkSink reads blocks of bulkBlock bytes and answers each with one byte.
func bulkSink(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					if _, err := io.CopyN(io.Discard, c, bulkBlock); err != nil {
						return
					}
					if _, err := c.Write([]byte{1}); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// sendBlock writes one block and waits for the sink's acknowledgement.
func sendBlock(b *testing.B, c net.Conn, buf []byte) time.Duration {
	start := time.Now()
	if _, err := c.Write(buf); err != nil {
		b.Fatal(err)
	}
	var ack [1]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkGatewayConnect: one 4 MiB block per op over a direct connection
// and over a CONNECT tunnel through the gateway. Reports both throughputs
// and their ratio (gateway / direct).
func BenchmarkGatewayConnect(b *testing.B) {
	for _, path := range benchPaths {
		b.Run(path.name, func(b *testing.B) {
			sink := bulkSink(b)
			tg := startGateway(b, Config{Allow: []string{"bulk.test:9"}}, map[string][]string{"bulk.test": {"203.0.113.9"}}, nil)
			tg.dialer.route("203.0.113.9:9", sink)
			direct, err := net.Dial("tcp", sink)
			if err != nil {
				b.Fatal(err)
			}
			defer direct.Close()
			gw := path.addr(b, tg)
			via := benchConnect(b, gw, "bulk.test:9")
			buf := make([]byte, bulkBlock)
			binary.LittleEndian.PutUint64(buf, 1)
			var td, tv time.Duration
			b.SetBytes(2 * bulkBlock)
			b.ResetTimer()
			for b.Loop() {
				td += sendBlock(b, direct, buf)
				tv += sendBlock(b, via, buf)
			}
			mb := func(t time.Duration) float64 { return float64(b.N) * bulkBlock / t.Seconds() / 1e6 }
			b.ReportMetric(mb(td), "direct-MB/s")
			b.ReportMetric(mb(tv), "gateway-MB/s")
			b.ReportMetric(td.Seconds()/tv.Seconds(), "ratio")
		})
	}
}

func benchConnect(b *testing.B, gw, target string) net.Conn {
	c, err := net.Dial("tcp", gw)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("CONNECT: %v %v", resp, err)
	}
	return c
}
