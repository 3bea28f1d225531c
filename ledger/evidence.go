package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Evidence is the channel on which a run's evidence travels as JSON lines
// while it happens (agentbox run/selftest --evidence FD|FILE): one line per
// probe result (DESIGN.md §5), then one {"event":"record","record":{…}}
// line with the record appended to the ledger, or, when the invocation
// failed before it had a record, one {"event":"error",…} line.
//
// The channel is the launcher's alone: an inherited descriptor other than
// stdin, stdout and stderr (which the agent writes too), made close-on-exec
// here, or a file the launcher creates itself. It is a copy for scripts;
// the ledger's record is the authority (agentbox show RUN_ID --json).
type Evidence struct {
	f *os.File
	// Name says which channel it is, for messages: "fd 3" or the path.
	Name    string
	created string // the path of a file OpenEvidence created
	// mu orders the lines: denials arrive from the listener's goroutine.
	mu  sync.Mutex
	err error
}

// EvidenceError is a --evidence value that cannot be used, with the fix.
type EvidenceError struct {
	Dest, Msg, Fix string
}

func (e *EvidenceError) Error() string {
	return fmt.Sprintf("--evidence %s: %s; %s", e.Dest, e.Msg, e.Fix)
}

// OpenEvidence opens dest: a decimal descriptor number of 3 or more that
// the caller inherited open for writing (and that is not the same file as
// stdout or stderr), or the path of a new file, which it creates with
// O_EXCL|O_NOFOLLOW, mode 0600: an existing file or a symlink (which the
// agent of an earlier run may have planted) is refused, never written
// through or over.
func OpenEvidence(dest string) (*Evidence, error) {
	if dest == "" {
		return nil, &EvidenceError{dest, "empty", "give a descriptor number (3 or more) or a new file's path"}
	}
	if n, err := strconv.Atoi(dest); err == nil {
		return inheritedEvidence(dest, n)
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil, &EvidenceError{dest, "the file exists", "give the path of a new file (evidence never goes into a file that may have been prepared for it; to append, open it yourself: --evidence 3 3>>FILE)"}
	case err != nil:
		return nil, &EvidenceError{dest, err.Error(), "give the path of a new file in a directory you can write"}
	}
	return &Evidence{f: f, Name: dest, created: dest}, nil
}

func inheritedEvidence(dest string, n int) (*Evidence, error) {
	if n < 3 {
		return nil, &EvidenceError{dest, "stdin, stdout and stderr are the agent's streams too, where it could print forged evidence", "use a descriptor of 3 or more (--evidence 3 3>evidence.jsonl) or a file"}
	}
	// A descriptor that was not inherited may still be open: the Go runtime
	// keeps cgroup files open read-only in the first free ones.
	fl, err := unix.FcntlInt(uintptr(n), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_ACCMODE == unix.O_RDONLY {
		return nil, &EvidenceError{dest, "descriptor " + dest + " is not open for writing", "open it where you start agentbox, for example: agentbox run --evidence 3 -- CMD 3>evidence.jsonl"}
	}
	for std, name := range []string{1: "stdout", 2: "stderr"} { // in order: the two may be one file
		if std > 0 && sameFile(n, std) {
			return nil, &EvidenceError{dest, "descriptor " + dest + " is the same file as " + name + ", which the agent writes too", "give the evidence a file or pipe of its own"}
		}
	}
	// Close-on-exec: no runtime, gateway or sandbox process inherits it.
	if _, err := unix.FcntlInt(uintptr(n), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, &EvidenceError{dest, err.Error(), "give a file instead"}
	}
	return &Evidence{f: os.NewFile(uintptr(n), "fd "+dest), Name: "fd " + dest}, nil
}

func sameFile(a, b int) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(a, &sa) != nil || unix.Fstat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// CheckOutside refuses a channel that is a regular file beneath one of
// dirs (the directories the sandbox can write: the workspace and
// read-write binds), where the agent could rewrite or replace it before a
// script reads it.
func (e *Evidence) CheckOutside(dirs []string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(e.f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil // pipes, sockets and devices cannot be rewritten from the workspace
	}
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(e.f.Fd())))
	if err != nil {
		return fmt.Errorf("evidence %s: %w", e.Name, err)
	}
	for _, d := range dirs {
		if d = filepath.Clean(d); path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return &EvidenceError{e.Name, fmt.Sprintf("%s is inside %s, which the sandbox can write", path, d), "put the evidence outside the workspace and the read-write binds"}
		}
	}
	return nil
}

// Probe writes one probe result.
func (e *Evidence) Probe(p Probe) { e.line(p) }

// Record writes the run's record: the channel's last line.
func (e *Evidence) Record(r Record) {
	e.line(struct {
		Event  string `json:"event"`
		Record Record `json:"record"`
	}{"record", r})
}

// Failed writes why an invocation ended before it had a record (nothing
// was run, nothing is in the ledger): the channel's last line.
func (e *Evidence) Failed(exitCode int, err error) {
	e.line(struct {
		Event    string `json:"event"`
		ExitCode int    `json:"exit_code"`
		Error    string `json:"error"`
	}{"error", exitCode, err.Error()})
}

// Line writes v as one JSON line (selftest's verdict, say).
func (e *Evidence) Line(v any) { e.line(v) }

// line writes v with a single write(2), keeping the first error for Close.
func (e *Evidence) line(v any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err == nil {
		_, err = e.f.Write(append(data, '\n'))
	}
	if err != nil {
		e.err = fmt.Errorf("evidence %s: %w", e.Name, err)
	}
}

// Close flushes a created file to disk and closes the channel; it returns
// the first error of any write.
func (e *Evidence) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.created != "" && e.err == nil {
		if err := e.f.Sync(); err != nil {
			e.err = fmt.Errorf("evidence %s: %w", e.Name, err)
		}
	}
	if err := e.f.Close(); err != nil && e.err == nil {
		e.err = fmt.Errorf("evidence %s: %w", e.Name, err)
	}
	return e.err
}
