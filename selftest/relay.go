package selftest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// The probe process's side of the init protocol, shared by agentbox-init
// (Linux: its probe child, agentbox-init --probe all --json) and the macOS
// starter (launcher.StarterMain: its probe child, the agentbox binary as
// the account under Seatbelt): the probes run in a child that stands where
// the agent will, print one JSON Result a line, and the parent relays each
// once, then sends every selected probe the child did not report on as
// UNKNOWN.

// ReadResults hands each result line of out to emit, once per probe, and
// marks it in seen. A line that is no Result is skipped: the child is the
// account's, and what it prints is judged, not trusted.
func ReadResults(out io.Reader, seen map[string]bool, emit func(Result) error) error {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var r Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || seen[r.Probe] {
			continue
		}
		seen[r.Probe] = true
		if err := emit(r); err != nil {
			return err
		}
	}
	return sc.Err()
}

// NoResult is the UNKNOWN of a selected probe the probe process gave no
// result for; cause says why, if known.
func NoResult(p Probe, runID string, cause error) Result {
	r := Result{
		Probe: p.Name, Target: "-", Expect: p.Expect, Decision: Unknown,
		Observed: "no-result", RunID: runID, Detail: fmt.Sprintf("the probe process gave no result (%v)", cause),
	}
	r.Evidence = r.Digest()
	return r
}

// WriteResults runs the probes e's config selects in this process and
// writes each result as a JSON line to w as soon as it is known: the probe
// child's side. passed says whether every probe passed.
func WriteResults(ctx context.Context, w io.Writer, e *Env) (passed bool, err error) {
	enc := json.NewEncoder(w)
	passed = true
	err = Run(ctx, e, func(r Result) error {
		passed = passed && r.Passed()
		return enc.Encode(r)
	})
	return passed, err
}
