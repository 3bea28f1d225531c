package netpolicy

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Decision is one line of the decision log: what a client asked for and what
// the gateway did. It never holds a header value, a key or a token.
type Decision struct {
	Time     time.Time `json:"time"`
	RunID    string    `json:"run_id"`
	Kind     string    `json:"kind"`               // connect, http, model, health, request; log for the log's own notes
	Target   string    `json:"target"`             // as requested (truncated to 256 bytes)
	Resolved string    `json:"resolved,omitempty"` // the address connected to
	Decision string    `json:"decision"`           // allow or deny; empty on a log note
	Reason   string    `json:"reason,omitempty"`
	Status   int       `json:"status,omitempty"` // HTTP status sent to the client
	BytesUp  int64     `json:"bytes_up"`         // client to destination
	BytesDn  int64     `json:"bytes_down"`       // destination to client
	Millis   int64     `json:"duration_ms"`
	// Scrubbed counts the copies of the route's real key the gateway
	// replaced in the upstream's response.
	Scrubbed int `json:"scrubbed,omitempty"`
	// Repeated, on an aggregate line, is how many more denials with this
	// kind, target, reason and status were made since the line that logged
	// the first of them; Time is the last one's, the byte counts are sums.
	Repeated uint64 `json:"repeated,omitempty"`
	// Dropped, on the log note written last, is what the log's byte cap
	// kept out of the file.
	Dropped *Dropped `json:"dropped,omitempty"`
}

// Dropped is what the decision log did not write once it reached
// Limits.LogMaxBytes. The decisions are counted in Stats all the same.
type Dropped struct {
	Allowed uint64 `json:"allowed"`
	Denied  uint64 `json:"denied"`
	Bytes   int64  `json:"bytes"` // the size the dropped lines would have had
}

// Decision values.
const (
	Allow = "allow"
	Deny  = "deny"
)

// KindLog is the kind of the log's own notes: the cap was reached, and what
// was dropped.
const KindLog = "log"

// Stats are the gateway's decision counts, for the run record. They count
// every decision, also those the log's caps kept out of the file.
type Stats struct {
	Allowed uint64 `json:"allowed"`
	Denied  uint64 `json:"denied"`
	// LogDropped is how many decisions the decision log did not write
	// because it reached its byte cap.
	LogDropped uint64 `json:"log_dropped,omitempty"`
}

// decisionLog writes one JSON line per decision and counts them. It keeps
// what it writes under maxBytes (a note says when the cap is reached, and
// the last line how much was dropped), cuts lines to maxLine, and collapses
// identical denials within window into one aggregate line.
type decisionLog struct {
	runID    string
	onDeny   func(Decision) // WithOnDeny's, or nil
	allowed  atomic.Uint64
	denied   atomic.Uint64
	maxBytes int64
	maxLine  int
	window   time.Duration
	reserve  int64 // room kept under maxBytes for the two notes

	mu      sync.Mutex
	w       io.Writer
	written int64
	capped  bool // the cap note is out; ordinary lines are dropped
	dropped Dropped
	repeats map[repeatKey]*repeat
	order   []*repeat // by window start, oldest first
	timer   *time.Timer
	closed  bool
	err     error // first write error, reported by Close
}

// repeatKey is what makes two denials the same for aggregation.
type repeatKey struct {
	kind, target, reason string
	status               int
}

// repeat is one denial key within its aggregation window.
type repeat struct {
	key    repeatKey
	start  time.Time // when the first was logged
	count  uint64    // later ones, not yet written
	last   time.Time
	up, dn int64
}

const (
	maxTargetLen   = 256
	maxRepeatKeys  = 256 // denial keys aggregated at once; more are logged one by one
	logNoteRoom    = 512 // room for one note, besides the run id
	logEllipsis    = "…"
	minLogMaxLine  = 512
	minLogMaxBytes = 64 << 10
)

func newDecisionLog(w io.Writer, runID string, l Limits) *decisionLog {
	return &decisionLog{
		w: w, runID: runID,
		maxBytes: l.LogMaxBytes, maxLine: l.LogMaxLine, window: time.Duration(l.LogRepeatWindow),
		reserve: 2 * int64(logNoteRoom+len(runID)),
		repeats: map[repeatKey]*repeat{},
	}
}

func (l *decisionLog) record(d Decision, start time.Time) {
	if d.Decision == Allow {
		l.allowed.Add(1)
	} else {
		d.Decision = Deny
		l.denied.Add(1)
	}
	d.Time = start.UTC()
	d.Millis = time.Since(start).Milliseconds()
	d.RunID = l.runID
	d.Target = cut(d.Target, maxTargetLen)
	if l.maxLine > 0 {
		d.Reason = cut(d.Reason, l.maxLine) // longer would be cut when written; this bounds the repeat keys too
	}
	if d.Decision == Deny && l.onDeny != nil {
		l.onDeny(d)
	}
	if l.w == nil {
		return
	}
	b := l.encode(d)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	now := time.Now()
	l.expire(now)
	if d.Decision == Deny && l.aggregated(d, now) {
		return
	}
	l.emit(b, d.Decision, 1)
}

// aggregated counts d into its key's window if one is open, or opens one.
// It reports whether d was collapsed (and so is not to be written).
func (l *decisionLog) aggregated(d Decision, now time.Time) bool {
	if l.window <= 0 {
		return false
	}
	k := repeatKey{d.Kind, d.Target, d.Reason, d.Status}
	if r, ok := l.repeats[k]; ok {
		r.count++
		r.last, r.up, r.dn = d.Time, r.up+d.BytesUp, r.dn+d.BytesDn
		return true
	}
	if len(l.repeats) < maxRepeatKeys {
		r := &repeat{key: k, start: now}
		l.repeats[k] = r
		l.order = append(l.order, r)
		l.armTimer()
	}
	return false
}

// expire closes every window older than l.window, writing the aggregate
// line of each that collapsed something.
func (l *decisionLog) expire(now time.Time) {
	n := 0
	for ; n < len(l.order) && now.Sub(l.order[n].start) >= l.window; n++ {
		l.flushRepeat(l.order[n])
	}
	if n > 0 {
		l.order = append(l.order[:0], l.order[n:]...)
	}
}

func (l *decisionLog) flushRepeat(r *repeat) {
	delete(l.repeats, r.key)
	if r.count == 0 {
		return
	}
	d := Decision{
		Time: r.last, RunID: l.runID, Kind: r.key.kind, Target: r.key.target, Decision: Deny,
		Reason: r.key.reason, Status: r.key.status, BytesUp: r.up, BytesDn: r.dn, Repeated: r.count,
	}
	l.emit(l.encode(d), Deny, r.count)
}

// armTimer makes sure the oldest open window is closed on time even when no
// further decision comes.
func (l *decisionLog) armTimer() {
	if len(l.order) == 0 {
		return
	}
	wait := time.Until(l.order[0].start.Add(l.window))
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.tick)
		return
	}
	l.timer.Reset(wait)
}

func (l *decisionLog) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.expire(time.Now())
	if len(l.order) > 0 {
		l.armTimer()
	}
}

// emit writes line b, standing for n decisions of kind decision, unless the
// byte cap keeps it out.
func (l *decisionLog) emit(b []byte, decision string, n uint64) {
	if l.capped || l.written+int64(len(b)) > l.maxBytes-l.reserve {
		l.drop(b, decision, n)
		return
	}
	l.write(b)
}

func (l *decisionLog) drop(b []byte, decision string, n uint64) {
	if !l.capped {
		l.capped = true
		l.write(l.encode(Decision{Time: time.Now().UTC(), RunID: l.runID, Kind: KindLog, Reason: fmt.Sprintf(
			"the decision log reached its cap of %d bytes (limits.log_max_bytes): later decisions are counted, not written; the last line says how many", l.maxBytes)}))
	}
	if decision == Allow {
		l.dropped.Allowed += n
	} else {
		l.dropped.Denied += n
	}
	l.dropped.Bytes += int64(len(b))
}

func (l *decisionLog) write(b []byte) {
	n, err := l.w.Write(b)
	l.written += int64(n)
	if err != nil && l.err == nil {
		l.err = err
	}
}

// encode renders d as one JSON line of at most l.maxLine bytes, cutting the
// reason first and then the target when it is longer. Cutting k bytes of a
// string shortens its JSON by at least k, since every byte takes at least
// one; the ellipsis adds its own length, which is cut too.
func (l *decisionLog) encode(d Decision) []byte {
	for range 3 {
		b, err := json.Marshal(d)
		if err != nil {
			return nil
		}
		over := len(b) + 1 - l.maxLine
		if over <= 0 || l.maxLine <= 0 {
			return append(b, '\n')
		}
		over += len(logEllipsis)
		switch {
		case len(d.Reason) > over:
			d.Reason = cut(d.Reason, len(d.Reason)-over)
		case len(d.Target) > over:
			d.Target = cut(d.Target, len(d.Target)-over)
		default:
			d.Reason, d.Target = cut(d.Reason, 0), cut(d.Target, 0)
		}
	}
	b, _ := json.Marshal(d)
	return append(b, '\n')
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut
// with an ellipsis (counted in n when n leaves room for it).
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n-len(logEllipsis), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + logEllipsis
}

// close writes the aggregate lines still open and, when the cap was
// reached, the note that says how much was dropped. It returns the first
// write error.
func (l *decisionLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	if l.w == nil {
		return nil
	}
	for _, r := range l.order {
		l.flushRepeat(r)
	}
	l.order = nil
	if l.capped {
		dropped := l.dropped
		l.write(l.encode(Decision{Time: time.Now().UTC(), RunID: l.runID, Kind: KindLog, Dropped: &dropped, Reason: fmt.Sprintf(
			"%d decisions (%d allowed, %d denied, %d bytes) were not written after the cap of %d bytes; the run's counts include them",
			dropped.Allowed+dropped.Denied, dropped.Allowed, dropped.Denied, dropped.Bytes, l.maxBytes)}))
	}
	return l.err
}

func (l *decisionLog) stats() Stats {
	l.mu.Lock()
	dropped := l.dropped.Allowed + l.dropped.Denied
	l.mu.Unlock()
	return Stats{Allowed: l.allowed.Load(), Denied: l.denied.Load(), LogDropped: dropped}
}
