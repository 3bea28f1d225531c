package netpolicy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// HealthPath is the route the self-test's gateway-reachable probe asks; it
// needs no token and answers 200 with {"status":"ok"}.
const HealthPath = "/_agentbox/health"

// clientConn is one client connection, served one request at a time.
type clientConn struct {
	g       *Gateway
	c       net.Conn
	br      *bufio.Reader
	body    *clientBody // the current request's body; nil when it has none
	refused bool        // a refusal was sent: linger before closing
}

// bodyBytes is how much of the current request body was read.
func (cc *clientConn) bodyBytes() int64 {
	if cc.body == nil {
		return 0
	}
	return cc.body.n
}

// finishBody makes the connection ready for the next request, or reports
// that it cannot be. handedOff says the body went to a consumer that will
// close it (an http.Transport); otherwise it is drained at once.
func (cc *clientConn) finishBody(handedOff bool) bool {
	if cc.body == nil {
		return true
	}
	if !handedOff {
		cc.body.Close()
	}
	return cc.body.drain(time.Duration(cc.g.limits.IdleTimeout))
}

func (g *Gateway) serveConn(c net.Conn) {
	cc := &clientConn{g: g, c: c, br: bufio.NewReaderSize(c, g.limits.MaxHeaderBytes)}
	for cc.serveOne() {
	}
	if cc.refused {
		cc.linger()
	}
}

// How long, and for how many bytes, a connection that was refused is read
// before it is closed.
const (
	lingerWait  = 500 * time.Millisecond
	lingerBytes = 4 << 20
)

// linger half-closes the connection and reads (and discards) what the
// client still sends, until it closes its side or lingerWait or
// lingerBytes run out. Closing with unread request bytes would reset the
// connection, and a reset can destroy the refusal before the client reads
// it; net/http's server lingers the same way.
func (cc *clientConn) linger() {
	if cw, ok := cc.c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = cc.c.SetReadDeadline(time.Now().Add(lingerWait))
	_, _ = io.CopyN(io.Discard, cc.c, lingerBytes)
}

// serveOne reads and answers one request; it reports whether the connection
// may carry another.
func (cc *clientConn) serveOne() bool {
	idle, headerTimeout := time.Duration(cc.g.limits.IdleTimeout), time.Duration(cc.g.limits.HeaderTimeout)
	_ = cc.c.SetReadDeadline(time.Now().Add(idle))
	if _, err := cc.br.Peek(1); err != nil {
		return false // closed or idle between requests: nothing to decide
	}
	start := time.Now()
	_ = cc.c.SetReadDeadline(start.Add(headerTimeout))
	head, err := readHead(cc.br, cc.g.limits.MaxHeaderBytes)
	if err != nil {
		cc.refuseHead(err, start)
		return false
	}
	req, err := http.ReadRequest(cc.br)
	if err != nil {
		cc.refuse(nil, start, http.StatusBadRequest, Decision{Kind: "request", Reason: "malformed request: " + err.Error()})
		return false
	}
	_ = cc.c.SetReadDeadline(time.Time{})
	if req.ProtoMajor != 1 {
		cc.refuse(req, start, http.StatusHTTPVersionNotSupported, Decision{Kind: "request", Reason: "only HTTP/1.x is served"})
		return false
	}
	cc.body = nil
	if req.Body != nil && req.Body != http.NoBody {
		cc.body = newClientBody(req.Body, cc.c, idle)
		req.Body = cc.body
	}
	switch {
	case req.Method == http.MethodConnect:
		cc.serveConnect(req, head, start)
		return false
	case req.URL.IsAbs():
		return cc.serveForward(req, head, start)
	case strings.HasPrefix(req.RequestURI, "/") && !strings.HasPrefix(req.RequestURI, "//"):
		return cc.serveLocal(req, start)
	}
	cc.refuse(req, start, http.StatusBadRequest, Decision{
		Kind: "request", Target: req.RequestURI,
		Reason: "request target is neither a path, an http:// URL nor a CONNECT authority",
	})
	return false
}

// refuseHead answers a request whose head could not be read.
func (cc *clientConn) refuseHead(err error, start time.Time) {
	d := Decision{Kind: "request"}
	var ne net.Error
	switch {
	case errors.Is(err, errHeadTooLarge):
		d.Reason = fmt.Sprintf("request head larger than %d bytes", cc.g.limits.MaxHeaderBytes)
		cc.refuse(nil, start, http.StatusRequestHeaderFieldsTooLarge, d)
	case errors.As(err, &ne) && ne.Timeout():
		d.Reason = fmt.Sprintf("request head not received within %s", time.Duration(cc.g.limits.HeaderTimeout))
		cc.refuse(nil, start, http.StatusRequestTimeout, d)
	default:
		d.Reason = "connection closed inside a request head"
		cc.g.log.record(d, start)
	}
}

// serveLocal answers origin-form requests: the health route and the model
// routes.
func (cc *clientConn) serveLocal(req *http.Request, start time.Time) bool {
	if req.URL.Path == HealthPath {
		return cc.serveHealth(req, start)
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/")
	r, ok := cc.g.routes[name]
	if !ok {
		cc.refuse(req, start, http.StatusNotFound, Decision{
			Kind: "model", Target: req.Method + " " + req.URL.Path,
			Reason: fmt.Sprintf("no model route %q; routes are %s, and other hosts go through the proxy (HTTP_PROXY)", name, cc.g.routeNames()),
		})
		return false
	}
	return cc.serveModel(req, r, start)
}

func (cc *clientConn) serveHealth(req *http.Request, start time.Time) bool {
	body := `{"status":"ok"}` + "\n"
	resp := &http.Response{
		StatusCode: http.StatusOK, ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(body)),
	}
	n, keep, err := cc.writeResponse(req, resp, nil)
	d := Decision{Kind: "health", Target: req.Method + " " + HealthPath, Decision: Allow, Status: http.StatusOK, BytesDn: n}
	if err != nil {
		d.Reason = "client went away: " + err.Error()
	}
	cc.g.log.record(d, start)
	return keep && err == nil
}

// refuse logs d as a denial and answers status with d.Reason as a plain-text
// body an agent can show, then the connection closes. req may be nil.
func (cc *clientConn) refuse(req *http.Request, start time.Time, status int, d Decision) {
	cc.refuseWith(req, start, status, d, nil)
}

// refuseWith is refuse with extra response headers.
func (cc *clientConn) refuseWith(req *http.Request, start time.Time, status int, d Decision, extra http.Header) {
	d.Decision, d.Status = Deny, status
	if d.Target == "" && req != nil {
		d.Target = req.RequestURI
	}
	body := "agentbox gateway: refused: " + d.Reason + "\n"
	resp := &http.Response{
		StatusCode: status, ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{
			"Content-Type":       {"text/plain; charset=utf-8"},
			"X-Agentbox-Refusal": {headerSafe(d.Reason)},
		},
		ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(body)),
	}
	for k, v := range extra {
		resp.Header[k] = v
	}
	if req == nil {
		req = &http.Request{Method: http.MethodGet, ProtoMajor: 1, ProtoMinor: 1}
	}
	req.Close = true
	cc.refused = true
	d.BytesDn = int64(len(body))
	cc.g.log.record(d, start) // the decision is made before the answer goes out
	_, _, _ = cc.writeResponse(req, resp, nil)
}

// refuseOver refuses a connection over Limits.MaxConns: with a 503 while
// fewer than MaxConns such answers are pending, else by closing it at once,
// so that a flood of connections holds no more than twice MaxConns.
func (g *Gateway) refuseOver(c net.Conn) {
	select {
	case g.busy <- struct{}{}:
		defer func() { <-g.busy }()
		g.refuseBusy(c)
	default:
		g.log.record(Decision{Kind: "request", Reason: fmt.Sprintf(
			"over the limit of %d connections (limits.max_conns) with as many refusals pending; closed without an answer", g.limits.MaxConns)}, time.Now())
	}
}

// refuseBusy answers a connection over Limits.MaxConns with 503. It first
// waits (briefly) for the request head, so that the client reads the answer
// as the answer to its request rather than as a stray response.
func (g *Gateway) refuseBusy(c net.Conn) {
	start := time.Now()
	wait := min(time.Duration(g.limits.HeaderTimeout), busyHeadWait)
	_ = c.SetReadDeadline(start.Add(wait))
	cc := &clientConn{g: g, c: c, br: bufio.NewReaderSize(c, 4096)}
	_, _ = readHead(cc.br, 4096)
	cc.refuse(nil, start, http.StatusServiceUnavailable, Decision{
		Kind:   "request",
		Reason: fmt.Sprintf("the gateway is serving its limit of %d connections (limits.max_conns); retry later", g.limits.MaxConns),
	})
	cc.linger()
}

// busyHeadWait bounds how long a refused connection is held.
const busyHeadWait = time.Second

func (g *Gateway) routeNames() string {
	names := make([]string, 0, len(g.routes))
	for _, r := range g.Routes() {
		names = append(names, "/"+r.Name+"/")
	}
	return strings.Join(names, ", ")
}

// headerSafe makes s fit in a header value: printable ASCII, one line.
func headerSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// clientBody wraps a request body read from the client connection. Reads
// fail after Limits.IdleTimeout without data, so that a client that stops
// sending mid-body does not hold the gateway; Close only records that the
// consumer is done, since the connection, not the consumer, owns the bytes
// that follow.
type clientBody struct {
	rc     io.ReadCloser
	c      net.Conn
	idle   time.Duration
	until  time.Time // when set, no read waits past it (Limits.BodyTimeout)
	n      int64
	once   sync.Once
	closed chan struct{}
}

func newClientBody(rc io.ReadCloser, c net.Conn, idle time.Duration) *clientBody {
	return &clientBody{rc: rc, c: c, idle: idle, closed: make(chan struct{})}
}

func (b *clientBody) Read(p []byte) (int, error) {
	deadline := time.Now().Add(b.idle)
	if !b.until.IsZero() && b.until.Before(deadline) {
		deadline = b.until
	}
	_ = b.c.SetReadDeadline(deadline)
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *clientBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// drain waits until the body's consumer is done with it, then reads what is
// left (up to 256 KiB) so that the next request on the connection starts
// where it should. It reports whether the connection may go on.
func (b *clientBody) drain(wait time.Duration) bool {
	select {
	case <-b.closed:
	case <-time.After(wait):
		return false
	}
	n, err := io.Copy(io.Discard, io.LimitReader(b.rc, 256<<10+1))
	_ = b.c.SetReadDeadline(time.Time{})
	return err == nil && n <= 256<<10
}
