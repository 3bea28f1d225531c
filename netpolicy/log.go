package netpolicy

import (
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Decision is one line of the decision log: what a client asked for and what
// the gateway did. It never holds a header value, a key or a token.
type Decision struct {
	Time     time.Time `json:"time"`
	RunID    string    `json:"run_id"`
	Kind     string    `json:"kind"`               // connect, http, model, health, request
	Target   string    `json:"target"`             // as requested (truncated to 256 bytes)
	Resolved string    `json:"resolved,omitempty"` // the address connected to
	Decision string    `json:"decision"`           // allow or deny
	Reason   string    `json:"reason,omitempty"`
	Status   int       `json:"status,omitempty"` // HTTP status sent to the client
	BytesUp  int64     `json:"bytes_up"`         // client to destination
	BytesDn  int64     `json:"bytes_down"`       // destination to client
	Millis   int64     `json:"duration_ms"`
}

// Decision values.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Stats are the gateway's decision counts, for the run record.
type Stats struct {
	Allowed uint64 `json:"allowed"`
	Denied  uint64 `json:"denied"`
}

// decisionLog writes one JSON line per decision and counts them.
type decisionLog struct {
	mu      sync.Mutex
	w       io.Writer
	runID   string
	allowed atomic.Uint64
	denied  atomic.Uint64
	err     error // first write error, reported by Close
}

const maxTargetLen = 256

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
	if len(d.Target) > maxTargetLen {
		d.Target = d.Target[:maxTargetLen] + "…"
	}
	if l.w == nil {
		return
	}
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b); err != nil && l.err == nil {
		l.err = err
	}
}

func (l *decisionLog) stats() Stats {
	return Stats{Allowed: l.allowed.Load(), Denied: l.denied.Load()}
}
