package netpolicy

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"sort"
)

// ScrubMarker overwrites every copy of a route's real key the gateway finds
// in what the upstream sends back. It is repeated and cut to the copy's
// length, so that lengths (and Content-Length) do not change.
const ScrubMarker = "[agentbox:scrubbed]"

// minScrubLen is the shortest form of a key that is scrubbed: a shorter
// one would match ordinary text. A key under 16 bytes is not scrubbed at
// all (docs/gateway.md says so).
const minScrubLen = 16

// maxKeyLen bounds a real key, so that the bytes a streamed body holds back
// while it could still be the start of one stay well under one chunk.
const maxKeyLen = 16 << 10

// scrubber finds a key in the forms an upstream that echoes it would send
// back: the key itself (also inside "Bearer KEY"), and its base64 in the
// standard and URL alphabets, with and without padding, also as part of a
// longer encoded string such as a Basic credential ("user:KEY"). For the
// last, the key is encoded from each of its first three bytes: whatever
// precedes it, one of those three encodings appears verbatim.
type scrubber struct {
	pats   [][]byte // longest first
	maxLen int
}

// newScrubber returns the scrubber for key, or nil when there is nothing to
// scrub (no key, or one too short to tell from text).
func newScrubber(key string) *scrubber {
	s := &scrubber{}
	add := func(p string) {
		if len(p) < minScrubLen {
			return
		}
		for _, q := range s.pats {
			if string(q) == p {
				return
			}
		}
		s.pats = append(s.pats, []byte(p))
		s.maxLen = max(s.maxLen, len(p))
	}
	add(key)
	k := []byte(key)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		add(enc.EncodeToString(k))
		for skip := range 3 {
			part := k[min(skip, len(k)):]
			add(enc.EncodeToString(part[:len(part)/3*3]))
		}
	}
	if len(s.pats) == 0 {
		return nil
	}
	sort.SliceStable(s.pats, func(i, j int) bool { return len(s.pats[i]) > len(s.pats[j]) })
	return s
}

// scrub overwrites every copy in b and returns how many it overwrote
// (overlapping matches of several forms count once).
func (s *scrubber) scrub(b []byte) int {
	type span struct{ at, end int }
	var spans []span
	for _, p := range s.pats {
		for i := 0; i <= len(b)-len(p); {
			j := bytes.Index(b[i:], p)
			if j < 0 {
				break
			}
			spans = append(spans, span{i + j, i + j + len(p)})
			i += j + 1
		}
	}
	if len(spans) == 0 {
		return 0
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].at < spans[j].at })
	n, end := 0, -1
	for _, sp := range spans {
		if sp.at >= end {
			n++
		}
		end = max(end, sp.end)
		for i := sp.at; i < sp.end; i++ {
			b[i] = ScrubMarker[(i-sp.at)%len(ScrubMarker)]
		}
	}
	return n
}

// held is how many bytes at the end of b could be the start of a copy: the
// longest suffix that is a proper prefix of a form. A stream keeps them
// back until more data shows whether the copy completes.
func (s *scrubber) held(b []byte) int {
	keep := 0
	for _, p := range s.pats {
		for i := max(0, len(b)-len(p)+1); i < len(b)-keep; i++ {
			if b[i] == p[0] && bytes.HasPrefix(p, b[i:]) {
				keep = len(b) - i
				break
			}
		}
	}
	return keep
}

// text scrubs a string.
func (s *scrubber) text(v string) (string, int) {
	if s == nil {
		return v, 0
	}
	b := []byte(v)
	n := s.scrub(b)
	return string(b), n
}

// header scrubs every header value and drops every header whose name holds
// a copy. It returns the copies found.
func (s *scrubber) header(h http.Header) int {
	n := 0
	for name, vs := range h {
		if _, c := s.text(name); c > 0 {
			delete(h, name)
			n += c
			continue
		}
		for i, v := range vs {
			var c int
			vs[i], c = s.text(v)
			n += c
		}
	}
	return n
}

// scrubStream scrubs one streamed body, read by read, holding back the
// bytes that could begin a copy straddling two reads.
type scrubStream struct {
	s     *scrubber
	held  []byte
	count int
}

func (s *scrubber) stream() *scrubStream {
	if s == nil {
		return nil
	}
	return &scrubStream{s: s}
}

// next scrubs data (the bytes held back last time, then the new ones) in
// place and returns how many of them to hold back now; last says no more
// data follows, so nothing is held.
func (st *scrubStream) next(data []byte, last bool) int {
	st.count += st.s.scrub(data)
	keep := 0
	if !last {
		keep = st.s.held(data)
	}
	st.held = append(st.held[:0], data[len(data)-keep:]...)
	return keep
}
