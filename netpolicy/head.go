package netpolicy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// errHeadTooLarge is a request head longer than Limits.MaxHeaderBytes.
var errHeadTooLarge = errors.New("request head too large")

// requestHead is what the gateway reads of a request head itself, before
// net/http parses it: the raw Host header values, which http.ReadRequest
// folds into Request.Host and deletes.
type requestHead struct {
	hosts []string
}

// readHead waits until br holds a complete request head (through the empty
// line) and returns its Host values without consuming anything, so that
// http.ReadRequest can parse the same bytes. br's buffer must be at least
// max bytes.
func readHead(br *bufio.Reader, max int) (requestHead, error) {
	for {
		buf, _ := br.Peek(br.Buffered())
		if end := headEnd(buf); end >= 0 {
			return parseHead(buf[:end]), nil
		}
		if len(buf) >= max {
			return requestHead{}, errHeadTooLarge
		}
		if _, err := br.Peek(len(buf) + 1); err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return requestHead{}, errHeadTooLarge
			}
			return requestHead{}, err
		}
	}
}

// headEnd returns the length of the head in buf including its terminating
// empty line, or -1. Like net/textproto it accepts bare LF line endings.
func headEnd(buf []byte) int {
	for i := 0; i < len(buf); i++ {
		if buf[i] != '\n' {
			continue
		}
		rest := buf[i+1:]
		if len(rest) > 0 && rest[0] == '\n' {
			return i + 2
		}
		if len(rest) > 1 && rest[0] == '\r' && rest[1] == '\n' {
			return i + 3
		}
	}
	return -1
}

// parseHead collects the values of header lines named Host (any case). A line
// starting with whitespace continues the previous one (obs-fold) and is never
// a Host line.
func parseHead(head []byte) requestHead {
	var h requestHead
	lines := bytes.Split(head, []byte("\n"))
	for _, l := range lines[1:] {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(l) == 0 || l[0] == ' ' || l[0] == '\t' {
			continue
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if ok && strings.EqualFold(string(name), "host") {
			h.hosts = append(h.hosts, string(bytes.Trim(value, " \t")))
		}
	}
	return h
}

// hostAgrees checks the Host header against the target a proxy request
// names: at most one Host header, naming the same host (compared after
// parsing, so spellings of one address agree) and, if it has a port, the
// same port. requireHost demands a Host header (absolute-form HTTP/1.1).
func hostAgrees(hosts []string, t Target, requireHost bool) error {
	switch {
	case len(hosts) > 1:
		return fmt.Errorf("%d Host headers", len(hosts))
	case len(hosts) == 0 && requireHost:
		return errors.New("no Host header")
	case len(hosts) == 0:
		return nil
	}
	h := hosts[0]
	if ht, err := ParseTarget(h); err == nil {
		if ht != t {
			return fmt.Errorf("the Host header %q names %s, the request names %s", h, ht, t)
		}
		return nil
	}
	name, addr, err := ParseHost(h)
	if err != nil {
		return fmt.Errorf("the Host header %q: %w", h, err)
	}
	if name != t.Name || addr != t.Addr {
		return fmt.Errorf("the Host header %q names another host than %s", h, t)
	}
	return nil
}
