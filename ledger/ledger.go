// Package ledger keeps agentbox's evidence: one JSON record per run, audit,
// gc, doctor or self-test (DESIGN.md §5), appended to a JSON-lines file.
//
// The file lives in agentbox's state directory (StateDir): as root
// /var/lib/agentbox/ledger.jsonl, otherwise
// $XDG_STATE_HOME/agentbox/ledger.jsonl (by default
// ~/.local/state/agentbox/ledger.jsonl). AGENTBOX_STATE_DIR overrides the
// directory. The directory is created 0700 and the file 0600: records name
// commands and paths, and the ledger is the user's own evidence.
//
// Appends are safe under concurrent runs, in one process or many: each
// record is a single write(2) to a file opened with O_APPEND, under an
// exclusive flock, followed by fsync. A record torn by a crash mid-write is
// skipped with a warning when reading, never fatal, and the next append
// starts on a fresh line so that it cannot be glued to the torn one.
//
// The ledger records argv but never the environment; do not pass secrets
// on an agent's command line.
//
// This package imports nothing else from agentbox, so that every stage can
// record into it.
package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// FileName is the ledger's file name inside the state directory.
const FileName = "ledger.jsonl"

// Errors of Get and Find, for errors.Is.
var (
	ErrNotFound  = errors.New("no such run")
	ErrAmbiguous = errors.New("run id prefix is ambiguous")
)

// StateDir returns agentbox's state directory: $AGENTBOX_STATE_DIR when set
// (it must be absolute), /var/lib/agentbox for euid 0, else
// $XDG_STATE_HOME/agentbox, else $HOME/.local/state/agentbox. Other
// packages may keep their own state under it.
func StateDir(getenv func(string) string, euid int) (string, error) {
	if d := getenv("AGENTBOX_STATE_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("AGENTBOX_STATE_DIR=%q is not an absolute path; set it to one", d)
		}
		return filepath.Clean(d), nil
	}
	if euid == 0 {
		return "/var/lib/agentbox", nil
	}
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) { // the XDG spec says to ignore a relative one
		return filepath.Join(d, "agentbox"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "agentbox"), nil
	}
	return "", errors.New("cannot find a state directory: HOME is not set to an absolute path; set HOME or AGENTBOX_STATE_DIR")
}

// Ledger is one ledger file. The zero value is not usable; use Open or
// Default.
type Ledger struct {
	Path string
}

// Open returns the ledger stored at path. Nothing is touched on disk until
// the first Append.
func Open(path string) *Ledger { return &Ledger{Path: path} }

// Default returns the ledger in this process's StateDir.
func Default() (*Ledger, error) {
	dir, err := StateDir(os.Getenv, os.Geteuid())
	if err != nil {
		return nil, err
	}
	return Open(filepath.Join(dir, FileName)), nil
}

// Append validates r and adds it as one line. It returns only after the
// record has been written in a single write and fsynced.
func (l *Ledger) Append(r Record) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("append to ledger: %w", err)
	}
	line, err := encode(r)
	if err != nil {
		return fmt.Errorf("append to ledger: encode record %s: %w", r.RunID, err)
	}
	if err := l.append(line); err != nil {
		return fmt.Errorf("append to ledger %s: %w", l.Path, err)
	}
	return nil
}

// encode returns r as one line of JSON ending in a newline. Strings keep
// '<', '>' and '&' as they are, for people reading the file.
func encode(r Record) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil { // Encode adds the newline
		return nil, err
	}
	return b.Bytes(), nil
}

func (l *Ledger) append(line []byte) error {
	dir := filepath.Dir(l.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(l.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close() // also drops the lock
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	torn, size, err := tornTail(f)
	if err != nil {
		return err
	}
	if torn { // keep a crashed writer's fragment on a line of its own
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if size == 0 {
		return syncDir(dir)
	}
	return nil
}

// tornTail reports whether f is non-empty and does not end in a newline,
// and its size.
func tornTail(f *os.File) (bool, int64, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false, 0, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, 0, err
	}
	return last[0] != '\n', fi.Size(), nil
}

// LineError is a line of the ledger that could not be read as a record. List
// skips such lines and returns them as warnings.
type LineError struct {
	Path string
	Line int
	Torn bool // the file's last line, unterminated: a write cut short by a crash
	Err  error
}

// Error implements error.
func (e *LineError) Error() string {
	what := "corrupt record"
	if e.Torn {
		what = "incomplete last record (a crash during a write?)"
	}
	return fmt.Sprintf("%s:%d: skipped %s: %v", e.Path, e.Line, what, e.Err)
}

// Unwrap returns the decoding error.
func (e *LineError) Unwrap() error { return e.Err }

// List returns every record in the order written, and a *LineError warning
// for each line it skipped. A ledger that does not exist yet is empty.
func (l *Ledger) List() ([]Record, []error, error) {
	f, err := os.Open(l.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read ledger: %w", err)
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_SH); err != nil { // no half-appended record
		return nil, nil, fmt.Errorf("read ledger: lock %s: %w", l.Path, err)
	}
	recs, warns, err := decode(f, l.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("read ledger %s: %w", l.Path, err)
	}
	return recs, warns, nil
}

// decode reads JSON lines from r; path only names the source in warnings.
func decode(r io.Reader, path string) ([]Record, []error, error) {
	var recs []Record
	var warns []error
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, err
		}
		terminated := bytes.HasSuffix(line, []byte{'\n'})
		if len(bytes.TrimSpace(line)) > 0 {
			var rec Record
			if derr := json.Unmarshal(line, &rec); derr != nil {
				warns = append(warns, &LineError{Path: path, Line: n, Torn: !terminated, Err: derr})
			} else {
				recs = append(recs, rec)
			}
		}
		if !terminated {
			return recs, warns, nil
		}
	}
}

// Get returns the record of runID (see Find) and List's warnings.
func (l *Ledger) Get(runID string) (Record, []error, error) {
	recs, warns, err := l.List()
	if err != nil {
		return Record{}, warns, err
	}
	r, err := Find(recs, runID)
	return r, warns, err
}

// Find returns the record whose run id is id, or else the one record whose
// run id starts with id. If several records share the run id, the last one
// wins. It returns ErrNotFound or an error wrapping ErrAmbiguous that lists
// the candidates.
func Find(recs []Record, id string) (Record, error) {
	if id == "" {
		return Record{}, fmt.Errorf("%w: empty run id", ErrNotFound)
	}
	var match []Record
	for i := len(recs) - 1; i >= 0; i-- {
		switch r := recs[i]; {
		case r.RunID == id:
			return r, nil
		case len(r.RunID) > len(id) && r.RunID[:len(id)] == id:
			match = append(match, r)
		}
	}
	switch {
	case len(match) == 0:
		return Record{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	case distinctIDs(match) > 1:
		return Record{}, fmt.Errorf("%w: %q matches %s; give more of the id", ErrAmbiguous, id, idList(match))
	}
	return match[0], nil
}

// Latest returns the n most recently started records of recs, newest first
// (all of them when n <= 0). recs is not modified.
func Latest(recs []Record, n int) []Record {
	out := slices.Clone(recs)
	slices.Reverse(out) // among equal start times, the later-written first
	slices.SortStableFunc(out, func(a, b Record) int { return b.Start.Compare(a.Start) })
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

func distinctIDs(recs []Record) int {
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.RunID] = true
	}
	return len(seen)
}

func idList(recs []Record) string {
	var b bytes.Buffer
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.RunID] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		seen[r.RunID] = true
		b.WriteString(r.RunID)
	}
	return b.String()
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
