package netpolicy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// bodyBudget is the memory the gateway lends to request bodies it must read
// whole (to check the model name), shared by every connection. Memory for
// such a body is allocated only once the budget has granted it and given
// back when the body's consumer is done, so used is what those bodies hold.
type bodyBudget struct {
	max int64

	mu    sync.Mutex
	used  int64
	peak  int64
	freed chan struct{} // closed (and replaced) whenever memory is given back
}

// errNoBudget is a body that could not get memory within Limits.BufferWait.
var errNoBudget = errors.New("no body budget")

func newBodyBudget(max int64) *bodyBudget {
	return &bodyBudget{max: max, freed: make(chan struct{})}
}

// take lends n bytes, waiting up to wait for others to give memory back.
func (b *bodyBudget) take(ctx context.Context, n int64, wait time.Duration) error {
	var expired <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+n <= b.max {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		b.mu.Unlock()
		if expired == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-freed:
		case <-expired:
			return errNoBudget
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	close(b.freed)
	b.freed = make(chan struct{})
}

// usage returns the bytes lent now and the most ever lent at once.
func (b *bodyBudget) usage() (used, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}

// heldBody is a request body read whole into memory lent by a bodyBudget.
// Close gives the memory back; the consumer (an http.Transport) always
// closes it, and the gateway closes it when it refuses the request.
type heldBody struct {
	*bytes.Reader
	b      []byte
	budget *bodyBudget
	lent   int64
	once   sync.Once
}

func (h *heldBody) Close() error {
	h.once.Do(func() { h.budget.give(h.lent) })
	return nil
}

// bodyStart is the first buffer for a body of unknown length; it doubles
// as the body grows.
const bodyStart = 64 << 10

// errTooLarge is a body over Limits.MaxBodyBytes.
var errTooLarge = errors.New("request body too large")

// bufferBody reads the current request's body whole, within
// Limits.MaxBodyBytes, Limits.BodyTimeout and the shared budget. It returns
// the body, or a status and reason to refuse the request with.
func (cc *clientConn) bufferBody(req *http.Request) (*heldBody, int, string) {
	lim := cc.g.limits
	if req.ContentLength > lim.MaxBodyBytes {
		status, reason := cc.bodyRefusal(errTooLarge)
		return nil, status, reason
	}
	cc.body.until = time.Now().Add(time.Duration(lim.BodyTimeout))
	defer func() { cc.body.until = time.Time{} }()
	size := req.ContentLength
	if size < 0 {
		size = min(bodyStart, lim.MaxBodyBytes)
	}
	h := &heldBody{budget: cc.g.bodies}
	buf, err := cc.readHeld(req.Body, h, size)
	if err != nil {
		h.Close()
		status, reason := cc.bodyRefusal(err)
		return nil, status, reason
	}
	h.b, h.Reader = buf, bytes.NewReader(buf)
	return h, 0, ""
}

// readHeld reads body into memory lent for h: one buffer of size (the
// Content-Length when there is one), grown by doubling up to
// Limits.MaxBodyBytes when the body goes on. A full buffer is grown only
// once one more byte has arrived, so that a body of known length takes
// exactly its length.
func (cc *clientConn) readHeld(body io.Reader, h *heldBody, size int64) ([]byte, error) {
	maxBody := cc.g.limits.MaxBodyBytes
	buf, err := cc.lend(h, nil, size)
	for err == nil {
		if len(buf) < cap(buf) {
			var n int
			n, err = body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			continue
		}
		var one [1]byte
		if n, rerr := io.ReadFull(body, one[:]); n == 0 {
			return buf, okEOF(rerr)
		}
		if int64(len(buf)) >= maxBody {
			return nil, errTooLarge
		}
		if buf, err = cc.lend(h, buf, min(2*int64(cap(buf)), maxBody)); err == nil {
			buf = append(buf, one[0])
		}
	}
	return buf, okEOF(err)
}

// okEOF turns the end of the body into success.
func okEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// lend moves h to a buffer of size bytes holding old's contents: the new
// memory is lent (waiting up to Limits.BufferWait) before it is allocated,
// and old's is given back after the copy.
func (cc *clientConn) lend(h *heldBody, old []byte, size int64) ([]byte, error) {
	if err := cc.g.bodies.take(cc.g.ctx, size, time.Duration(cc.g.limits.BufferWait)); err != nil {
		return nil, err
	}
	buf := make([]byte, len(old), size)
	copy(buf, old)
	if h.lent > 0 {
		cc.g.bodies.give(h.lent)
	}
	h.lent = size
	return buf, nil
}

// bodyRefusal is the status and reason for a body bufferBody could not read.
func (cc *clientConn) bodyRefusal(err error) (int, string) {
	lim := cc.g.limits
	var ne net.Error
	switch {
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"the route restricts model names, so the gateway reads the whole body, and it is over %d bytes (limits.max_body_bytes)", lim.MaxBodyBytes)
	case errors.Is(err, errNoBudget):
		return http.StatusServiceUnavailable, fmt.Sprintf(
			"the gateway already holds %d bytes of request bodies for other requests (limits.max_buffered_bytes) and none came free within %s; retry",
			lim.MaxBufferedBytes, time.Duration(lim.BufferWait))
	case errors.As(err, &ne) && ne.Timeout():
		return http.StatusRequestTimeout, fmt.Sprintf("the request body did not arrive within %s (limits.body_timeout)", time.Duration(lim.BodyTimeout))
	}
	return http.StatusBadRequest, "reading the request body: " + err.Error()
}
