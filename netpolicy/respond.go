package netpolicy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// hopHeaders are connection-level headers that never cross the gateway.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// endToEnd returns a copy of h without hop-by-hop headers, including any that
// the Connection header names.
func endToEnd(h http.Header) http.Header {
	out := h.Clone()
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			out.Del(textproto.TrimString(name))
		}
	}
	for _, name := range hopHeaders {
		out.Del(name)
	}
	return out
}

// bodyless reports whether a response to req with this status has no body.
func bodyless(req *http.Request, status int) bool {
	return req.Method == http.MethodHead || status == http.StatusNoContent ||
		status == http.StatusNotModified || (status >= 100 && status < 200)
}

// writeResponse sends resp to the client and streams its body: each read from
// the body is written to the socket at once (as one chunk when chunked), so
// server-sent events reach the agent without delay. When sc is set, the
// body is scrubbed on the way (the caller scrubs the headers). It reports
// the body bytes sent and whether the connection may carry another request.
func (cc *clientConn) writeResponse(req *http.Request, resp *http.Response, sc *scrubStream) (int64, bool, error) {
	if resp.Body != nil {
		defer resp.Body.Close()
	}
	keep := req.ProtoAtLeast(1, 1) && !req.Close && !cc.g.isClosed()
	h := endToEnd(resp.Header)
	h.Del("Content-Length") // framing is the gateway's to decide, below
	chunked := false
	switch {
	case resp.ContentLength >= 0:
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	case bodyless(req, resp.StatusCode):
	case keep:
		chunked = true
		h.Set("Transfer-Encoding", "chunked") //nolint:gosec // G113: Content-Length was deleted above and is set only in the other branch
	default:
		keep = false
	}
	if !keep {
		h.Set("Connection", "close")
	}
	var head bytes.Buffer
	fmt.Fprintf(&head, "HTTP/1.1 %03d %s\r\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	_ = h.Write(&head)
	head.WriteString("\r\n")
	if err := cc.write(head.Bytes()); err != nil {
		return 0, false, err
	}
	if bodyless(req, resp.StatusCode) || resp.Body == nil {
		return 0, keep, nil
	}
	n, err := cc.copyBody(resp.Body, chunked, sc)
	if err == nil && !chunked && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("upstream sent %d of %d body bytes", n, resp.ContentLength)
	}
	return n, keep && err == nil, err
}

// write sends b with a write deadline of Limits.IdleTimeout, so that a client
// that stops reading cannot hold the gateway.
func (cc *clientConn) write(b []byte) error {
	_ = cc.c.SetWriteDeadline(time.Now().Add(time.Duration(cc.g.limits.IdleTimeout)))
	_, err := cc.c.Write(b)
	return err
}

const (
	chunkRoom = 18       // room for a hex length and CRLF before the data
	chunkMax  = 32 << 10 // largest chunk
)

// copyBody streams body to the client, one write per read. A body that sends
// nothing for Limits.IdleTimeout is closed. With sc, each read is scrubbed
// together with the bytes held back from the read before (at most the
// longest form of the key less one), and the bytes that could begin a copy
// are held back in turn; they go out with the next read, or at the end.
func (cc *clientConn) copyBody(body io.ReadCloser, chunked bool, sc *scrubStream) (int64, error) {
	buf := make([]byte, chunkRoom+chunkMax+2)
	idle := time.Duration(cc.g.limits.IdleTimeout)
	timer := time.AfterFunc(idle, func() { body.Close() })
	defer timer.Stop()
	var total int64
	for {
		k := 0
		if sc != nil {
			k = copy(buf[chunkRoom:], sc.held)
		}
		n, rerr := body.Read(buf[chunkRoom+k : chunkRoom+chunkMax])
		timer.Reset(idle)
		total += int64(n)
		out := k + n
		if sc != nil {
			out -= sc.next(buf[chunkRoom:chunkRoom+out], errors.Is(rerr, io.EOF))
		}
		if out > 0 {
			if err := cc.write(cc.frame(buf, out, chunked)); err != nil {
				return total, err
			}
		}
		if errors.Is(rerr, io.EOF) {
			if chunked {
				return total, cc.write([]byte("0\r\n\r\n"))
			}
			return total, nil
		}
		if rerr != nil {
			return total, fmt.Errorf("read upstream body: %w", rerr)
		}
	}
}

// frame returns the n bytes at buf[chunkRoom:] as they go on the wire.
func (cc *clientConn) frame(buf []byte, n int, chunked bool) []byte {
	if chunked {
		return frameChunk(buf, n)
	}
	return buf[chunkRoom : chunkRoom+n]
}

// frameChunk writes the chunk header before the n data bytes at
// buf[chunkRoom:] and CRLF after them, and returns the framed chunk.
func frameChunk(buf []byte, n int) []byte {
	size := strconv.FormatInt(int64(n), 16) + "\r\n"
	start := chunkRoom - len(size)
	copy(buf[start:], size)
	end := chunkRoom + n
	buf[end], buf[end+1] = '\r', '\n'
	return buf[start : end+2]
}
