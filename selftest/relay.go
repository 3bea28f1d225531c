package selftest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	return ReadResultsBatched(out, seen, emit, nil)
}

// ReadResultsBatched is ReadResults that also calls idle (when not nil)
// whenever it has handed on every line read so far and would wait for
// more, and at the end: a caller that queues what emit sends flushes
// there, so that results that arrived together leave together and none
// waits for a later one.
func ReadResultsBatched(out io.Reader, seen map[string]bool, emit func(Result) error, idle func() error) error {
	flush := func() error { return nil }
	if idle != nil {
		flush = idle
	}
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			if r, derr := unmarshalResult(line); derr == nil && !seen[r.Probe] {
				seen[r.Probe] = true
				if err := emit(r); err != nil {
					return err
				}
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return flush()
		case err != nil:
			return err
		case br.Buffered() == 0:
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// readLine reads one line of at most maxLine bytes, without its newline;
// the last line may lack one (then io.EOF comes with it).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxLine {
			return nil, bufio.ErrTooLong
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(line, []byte("\n")), err
		}
	}
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
