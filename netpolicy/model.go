package netpolicy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"
)

// route is one model route: where /NAME/... goes and with which key.
type route struct {
	name     string
	base     *url.URL
	key      string // the real key; never logged
	keySrc   string
	auth     string
	models   map[string]bool
	explicit bool // the user named the URL: loopback and private addresses allowed
	rt       *http.Transport
	scrub    *scrubber // finds the key in what comes back; nil without a key
}

func (r *route) info() RouteInfo {
	ri := RouteInfo{Name: r.name, URL: r.base.String(), Explicit: r.explicit, KeySource: r.keySrc, HasKey: r.key != ""}
	for m := range r.models {
		ri.Models = append(ri.Models, m)
	}
	return ri
}

func (r *route) closeIdle() { r.rt.CloseIdleConnections() }

// clientAuthHeaders carry the agent's credentials; they are checked and never
// forwarded.
var clientAuthHeaders = []string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Proxy-Authorization"}

// presentedToken returns the token a request carries as a bearer token or an
// API-key header (Anthropic's x-api-key, Azure's api-key, Google's
// x-goog-api-key), the ways agents send keys.
func presentedToken(h http.Header) string {
	if v, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	if v := h.Get("X-Api-Key"); v != "" {
		return v
	}
	if v := h.Get("X-Goog-Api-Key"); v != "" {
		return v
	}
	return h.Get("Api-Key")
}

// modelMethods are the only methods model routes forward: the ones the
// OpenAI and Anthropic APIs use. GET lists and retrieves (models, stored
// responses, files, batches), POST creates, and in those APIs also modifies
// and cancels, and DELETE removes stored responses, files, batches and
// fine-tuned models. Anything else (TRACE, which reflects the request with
// its headers; PUT, PATCH, OPTIONS, HEAD, …) is refused with 405 before a
// key is attached.
var modelMethods = []string{http.MethodGet, http.MethodPost, http.MethodDelete}

func modelMethod(m string) bool {
	for _, ok := range modelMethods {
		if m == ok {
			return true
		}
	}
	return false
}

// serveModel checks the method, the token (and the model name, when the
// route restricts it), swaps the token for the real key and streams the
// upstream's answer.
func (cc *clientConn) serveModel(req *http.Request, r *route, start time.Time) bool {
	d := Decision{Kind: "model", Target: r.name + " " + req.Method + " " + req.URL.Path}
	if !modelMethod(req.Method) {
		d.Reason = fmt.Sprintf("model routes take only %s (what the model APIs use), not %s", strings.Join(modelMethods, ", "), req.Method)
		cc.refuseWith(req, start, http.StatusMethodNotAllowed, d, http.Header{"Allow": {strings.Join(modelMethods, ", ")}})
		return false
	}
	token := *cc.g.token.Load()
	if !tokenEqual(presentedToken(req.Header), token) {
		d.Reason = "missing or wrong gateway token (agentbox gives the agent a per-run token; a token from another run is revoked)"
		cc.refuse(req, start, http.StatusUnauthorized, d)
		return false
	}
	rest := strings.TrimPrefix(req.URL.Path, "/"+r.name)
	if err := checkRoutePath(rest, req.URL.EscapedPath()); err != nil {
		d.Reason = err.Error()
		cc.refuse(req, start, http.StatusBadRequest, d)
		return false
	}
	if len(r.models) > 0 {
		if status, reason := cc.checkModel(req, r); status != 0 {
			d.Reason = reason
			cc.refuse(req, start, status, d)
			return false
		}
	}
	if h, ok := req.Body.(*heldBody); ok {
		defer h.Close() // the transport closes it as well; this covers every path that does not reach it
	}
	out := r.outbound(req, rest, token)
	if err := cc.continue100(req, out); err != nil {
		return false
	}
	ctx, cancel := context.WithCancel(cc.g.ctx)
	defer cancel()
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { d.Resolved = i.Conn.RemoteAddr().String() }}
	resp, err := r.rt.RoundTrip(out.WithContext(httptrace.WithClientTrace(ctx, trace)))
	if err != nil {
		d.Reason, d.Scrubbed = r.scrub.text(fmt.Sprintf("upstream %s (%s) failed: %v", r.name, r.base.Host, err))
		cc.refuse(req, start, http.StatusBadGateway, d)
		return false
	}
	if reason := r.unscrubbable(resp); reason != "" {
		resp.Body.Close()
		d.Reason = reason
		cc.refuse(req, start, http.StatusBadGateway, d)
		return false
	}
	d.Decision, d.Status = Allow, resp.StatusCode
	keep := cc.relayScrubbed(req, r, resp, &d)
	keep = keep && cc.finishBody(out.Body != nil && out.Body == io.ReadCloser(cc.body))
	d.BytesUp = cc.bodyBytes()
	cc.g.log.record(d, start)
	return keep
}

// relayScrubbed streams the upstream's response to the agent with the
// route's key scrubbed from its headers and body, and notes in d what was
// scrubbed. It reports whether the connection may carry another request.
func (cc *clientConn) relayScrubbed(req *http.Request, r *route, resp *http.Response, d *Decision) bool {
	sc := r.scrub.stream()
	if sc != nil {
		d.Scrubbed = r.scrub.header(resp.Header)
	}
	n, keep, err := cc.writeResponse(req, resp, sc)
	d.BytesDn = n
	if err != nil {
		d.Reason, _ = r.scrub.text("stream ended early: " + err.Error())
	}
	if sc != nil {
		d.Scrubbed += sc.count
	}
	if d.Scrubbed > 0 && d.Reason == "" {
		d.Reason = fmt.Sprintf("the upstream sent the real key back; %d copies were replaced with %s", d.Scrubbed, ScrubMarker)
	}
	return keep
}

// checkRoutePath refuses paths that could leave the upstream's base path:
// dot segments and encoded slashes or dots.
func checkRoutePath(rest, escaped string) error {
	if rest != "" && !strings.HasPrefix(rest, "/") {
		return fmt.Errorf("path %q does not continue the route name with /", rest)
	}
	lower := strings.ToLower(escaped)
	for _, bad := range []string{"%2f", "%5c", "%2e", "\\"} {
		if strings.Contains(lower, bad) {
			return fmt.Errorf("path %q contains %q, which the gateway does not forward", escaped, bad)
		}
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("path %q contains a dot segment", rest)
		}
	}
	return nil
}

// outbound builds the upstream request: same method, path under the base
// URL, query and end-to-end headers, with the agent's credentials replaced
// by the real key. A header that contains the token anywhere is dropped.
func (r *route) outbound(req *http.Request, rest, token string) *http.Request {
	u := *r.base
	u.Path = strings.TrimSuffix(r.base.Path, "/") + rest
	u.RawPath = ""
	u.RawQuery = req.URL.RawQuery
	h := endToEnd(req.Header)
	for _, name := range clientAuthHeaders {
		h.Del(name)
	}
	if r.scrub != nil {
		// The transport then asks for gzip itself and decodes it, so the
		// response can be searched for the key.
		h.Del("Accept-Encoding")
	}
	for name, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, token) {
				h.Del(name)
				break
			}
		}
	}
	switch {
	case r.key == "":
	case r.auth == AuthXAPIKey:
		h.Set("X-Api-Key", r.key)
	case r.auth == AuthXGoogAPIKey:
		h.Set("X-Goog-Api-Key", r.key)
	default:
		h.Set("Authorization", "Bearer "+r.key)
	}
	out := &http.Request{
		Method: req.Method, URL: &u, Host: u.Host, Header: h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: req.Body, ContentLength: req.ContentLength,
	}
	if req.ContentLength == 0 {
		out.Body = nil
	}
	return out
}

// unscrubbable returns why a response cannot go back to the agent: it is
// encoded in a way the gateway cannot search for the key (the transport
// decodes the gzip it asked for; an upstream that encodes anyway is refused).
func (r *route) unscrubbable(resp *http.Response) string {
	enc := resp.Header.Get("Content-Encoding")
	if r.scrub == nil || enc == "" || strings.EqualFold(enc, "identity") {
		return ""
	}
	return fmt.Sprintf("upstream %s sent a %s-encoded response, which the gateway cannot search for the real key", r.name, headerSafe(enc))
}

// continue100 answers "Expect: 100-continue" itself, once the request has
// passed every check, and does not forward the expectation.
func (cc *clientConn) continue100(req, out *http.Request) error {
	if !strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		return nil
	}
	out.Header.Del("Expect")
	return cc.write([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
}
