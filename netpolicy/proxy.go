package netpolicy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// proxyCheck decides a proxy request for t: the Host header must agree, t
// must be on the allowlist (checked before any DNS query, so a refused name
// is never resolved), and every address it has must be allowed. It returns
// the status and denial to refuse with, or the addresses to dial.
func (cc *clientConn) proxyCheck(ctx context.Context, t Target, head requestHead, requireHost bool) ([]netip.Addr, int, error) {
	if err := hostAgrees(head.hosts, t, requireHost); err != nil {
		return nil, http.StatusBadRequest, deny("request target and Host header disagree: %v", err)
	}
	if !cc.g.allow.Allows(t) {
		return nil, http.StatusForbidden, deny("%s is not in network.allow (add it to network.allow in agentbox.yaml to let the sandbox reach it)", t)
	}
	addrs, err := cc.g.resolve(ctx, t, true)
	if err != nil {
		return nil, http.StatusForbidden, err
	}
	return addrs, 0, nil
}

// serveConnect opens a tunnel to an allowlisted host:port. TLS inside the
// tunnel is not touched.
func (cc *clientConn) serveConnect(req *http.Request, head requestHead, start time.Time) {
	d := Decision{Kind: "connect", Target: req.RequestURI}
	t, err := ParseTarget(req.RequestURI)
	if err != nil {
		d.Reason = "CONNECT target: " + err.Error()
		cc.refuse(req, start, http.StatusBadRequest, d)
		return
	}
	ctx := cc.g.ctx
	addrs, status, err := cc.proxyCheck(ctx, t, head, false)
	if err != nil {
		d.Reason = err.Error()
		cc.refuse(req, start, status, d)
		return
	}
	up, err := cc.g.dialAddrs(ctx, addrs, t.Port)
	if err != nil {
		d.Reason = fmt.Sprintf("%s: %v", t, err)
		cc.refuse(req, start, http.StatusBadGateway, d)
		return
	}
	defer up.Close()
	d.Resolved = up.RemoteAddr().String()
	if err := cc.write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		d.Decision, d.Reason = Allow, "client went away before the tunnel opened"
		cc.g.log.record(d, start)
		return
	}
	d.Decision = Allow
	d.BytesUp, d.BytesDn = cc.tunnel(up)
	cc.g.log.record(d, start)
}

// tunnel relays between the client and up until both sides are done, first
// passing on bytes the client sent before the 200 (an eager TLS hello).
func (cc *clientConn) tunnel(up net.Conn) (upBytes, downBytes int64) {
	_ = cc.c.SetDeadline(time.Time{})
	if n := cc.br.Buffered(); n > 0 {
		early, _ := cc.br.Peek(n)
		if _, err := up.Write(early); err != nil {
			return 0, 0
		}
		upBytes = int64(n)
	}
	u, dn := relay(cc.c, up, time.Duration(cc.g.limits.IdleTimeout))
	return upBytes + u, dn
}

// serveForward proxies one absolute-form request ("GET http://host/path")
// to an allowlisted host and streams the answer back.
func (cc *clientConn) serveForward(req *http.Request, head requestHead, start time.Time) bool {
	d := Decision{Kind: "http", Target: req.Method + " " + req.URL.Scheme + "://" + req.URL.Host + req.URL.Path}
	t, status, err := forwardTarget(req)
	if err != nil {
		d.Reason = err.Error()
		cc.refuse(req, start, status, d)
		return false
	}
	ctx := cc.g.ctx
	addrs, status, err := cc.proxyCheck(ctx, t, head, req.ProtoAtLeast(1, 1))
	if err != nil {
		d.Reason = err.Error()
		cc.refuse(req, start, status, d)
		return false
	}
	up, err := cc.g.dialAddrs(ctx, addrs, t.Port)
	if err != nil {
		d.Reason = fmt.Sprintf("%s: %v", t, err)
		cc.refuse(req, start, http.StatusBadGateway, d)
		return false
	}
	defer up.Close()
	d.Resolved = up.RemoteAddr().String()
	resp, err := cc.roundTrip(req, up, t)
	if err != nil {
		d.Reason = fmt.Sprintf("%s: %v", t, err)
		cc.refuse(req, start, http.StatusBadGateway, d)
		return false
	}
	d.Decision, d.Status = Allow, resp.StatusCode
	var keep bool
	d.BytesDn, keep, err = cc.writeResponse(req, resp, nil)
	if err != nil {
		d.Reason = "response ended early: " + err.Error()
	}
	keep = keep && cc.finishBody(false)
	d.BytesUp = cc.bodyBytes()
	cc.g.log.record(d, start)
	return keep
}

// forwardTarget reads the destination of an absolute-form request.
func forwardTarget(req *http.Request) (Target, int, error) {
	if req.URL.Scheme != "http" {
		return Target{}, http.StatusBadRequest, deny("the proxy forwards only http:// URLs; https goes through CONNECT")
	}
	if req.URL.User != nil {
		return Target{}, http.StatusBadRequest, deny("credentials in the request URL are not forwarded")
	}
	hostport := req.URL.Host
	if req.URL.Port() == "" {
		hostport = net.JoinHostPort(strings.Trim(req.URL.Host, "[]"), "80")
	}
	t, err := ParseTarget(hostport)
	if err != nil {
		return Target{}, http.StatusBadRequest, deny("request URL: %v", err)
	}
	return t, 0, nil
}

// roundTrip sends req to up in origin form with Host set to the checked
// target, and reads the response head.
func (cc *clientConn) roundTrip(req *http.Request, up net.Conn, t Target) (*http.Response, error) {
	h := endToEnd(req.Header)
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // keep net/http from adding its own
	}
	out := &http.Request{
		Method: req.Method, URL: &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}, Host: hostHeader(t),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h,
		Body: req.Body, ContentLength: req.ContentLength, Close: true,
	}
	if req.ContentLength == 0 {
		out.Body = nil
	}
	if err := cc.continue100(req, out); err != nil {
		return nil, err
	}
	idle := time.Duration(cc.g.limits.IdleTimeout)
	_ = up.SetDeadline(time.Now().Add(idle))
	if err := out.Write(up); err != nil {
		return nil, fmt.Errorf("send request: %w", err)
	}
	head := &io.LimitedReader{R: up, N: maxResponseHeaderBytes}
	resp, err := http.ReadResponse(bufio.NewReader(head), out)
	if err != nil {
		return nil, fmt.Errorf("read response (a head of at most %d bytes): %w", maxResponseHeaderBytes, err)
	}
	head.N = math.MaxInt64 // the head is read; the body is streamed
	_ = up.SetDeadline(time.Time{})
	if resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body.Close()
		return nil, errors.New("the destination switched protocols, which the proxy does not relay; use CONNECT")
	}
	return resp, nil
}

// hostHeader is the Host the destination receives: the target as checked,
// without the port when it is 80.
func hostHeader(t Target) string {
	if t.Port == 80 {
		return strings.TrimSuffix(t.String(), ":80")
	}
	return t.String()
}
