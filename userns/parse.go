package userns

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// SubIDEntry is one line of /etc/subuid or /etc/subgid: Owner may use the
// ids Start .. Start+Count-1. Owner is a user name or a numeric uid, as
// written in the file.
type SubIDEntry struct {
	Owner string
	Start uint32
	Count uint32
}

// End returns the first id after the entry's range (64-bit, so that a range
// ending at the top of the id space does not wrap).
func (e SubIDEntry) End() uint64 { return uint64(e.Start) + uint64(e.Count) }

// PasswdEntry is the part of one /etc/passwd line that id allocation needs.
type PasswdEntry struct {
	Name string
	UID  uint32
	GID  uint32
}

// GroupEntry is the part of one /etc/group line that id allocation needs.
type GroupEntry struct {
	Name string
	GID  uint32
}

// ParseError is a malformed line in an id database. The caller adds the
// file name; Error reads "line N: message".
type ParseError struct {
	Line int
	Msg  string
}

// Error implements error.
func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// maxID is the largest valid id: (uid_t)-1 is reserved as "no id".
const maxID = 1<<32 - 2

// ParseSubIDs parses the subuid/subgid format "owner:start:count". Blank
// lines and lines starting with '#' are ignored. Any other malformed line is
// a *ParseError naming its line: a half-understood file must not become a
// wrong allocation.
func ParseSubIDs(r io.Reader) ([]SubIDEntry, error) {
	var out []SubIDEntry
	err := eachLine(r, func(n int, fields []string) error {
		if len(fields) != 3 {
			return &ParseError{n, fmt.Sprintf("want owner:start:count, got %d fields", len(fields))}
		}
		if fields[0] == "" {
			return &ParseError{n, "empty owner"}
		}
		start, err := parseID(fields[1])
		if err != nil {
			return &ParseError{n, "start: " + err.Error()}
		}
		count, err := parseID(fields[2])
		if err != nil || count == 0 {
			return &ParseError{n, fmt.Sprintf("count %q is not a positive id count", fields[2])}
		}
		e := SubIDEntry{Owner: fields[0], Start: start, Count: count}
		if e.End() > maxID+1 {
			return &ParseError{n, fmt.Sprintf("range %d+%d runs past the largest id %d", start, count, uint32(maxID))}
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// ParsePasswd parses /etc/passwd ("name:pw:uid:gid:gecos:home:shell").
// Blank lines, '#' comments and NIS compat lines ('+' or '-') are ignored.
func ParsePasswd(r io.Reader) ([]PasswdEntry, error) {
	var out []PasswdEntry
	err := eachLine(r, func(n int, f []string) error {
		if len(f) < 4 {
			return &ParseError{n, fmt.Sprintf("want at least name:pw:uid:gid, got %d fields", len(f))}
		}
		uid, err := parseID(f[2])
		if err != nil {
			return &ParseError{n, "uid: " + err.Error()}
		}
		gid, err := parseID(f[3])
		if err != nil {
			return &ParseError{n, "gid: " + err.Error()}
		}
		out = append(out, PasswdEntry{Name: f[0], UID: uid, GID: gid})
		return nil
	})
	return out, err
}

// ParseGroup parses /etc/group ("name:pw:gid:members"), ignoring the same
// lines as ParsePasswd.
func ParseGroup(r io.Reader) ([]GroupEntry, error) {
	var out []GroupEntry
	err := eachLine(r, func(n int, f []string) error {
		if len(f) < 3 {
			return &ParseError{n, fmt.Sprintf("want at least name:pw:gid, got %d fields", len(f))}
		}
		gid, err := parseID(f[2])
		if err != nil {
			return &ParseError{n, "gid: " + err.Error()}
		}
		out = append(out, GroupEntry{Name: f[0], GID: gid})
		return nil
	})
	return out, err
}

// eachLine calls fn with the 1-based number and the ':'-separated fields of
// every line that is not blank, a '#' comment or an NIS compat line.
func eachLine(r io.Reader, fn func(n int, fields []string) error) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		if err := fn(n, strings.Split(line, ":")); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	return nil
}

// parseID parses a decimal id in 0..maxID.
func parseID(s string) (uint32, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil || v > maxID {
		return 0, fmt.Errorf("%q is not an id in 0..%d", s, uint32(maxID))
	}
	return uint32(v), nil
}

// Owned returns the entries that belong to the user called name with uid
// uid: the files may name an owner either way.
func Owned(entries []SubIDEntry, name string, uid uint32) []SubIDEntry {
	id := strconv.FormatUint(uint64(uid), 10)
	var out []SubIDEntry
	for _, e := range entries {
		if e.Owner == name || e.Owner == id {
			out = append(out, e)
		}
	}
	return out
}

// readFile parses path with parse. A missing file is not an error when
// optional is set (hosts without subuid files are common); other errors name
// the file.
func readFile[T any](path string, optional bool, parse func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && optional {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open id database: %w", err)
	}
	defer f.Close()
	out, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
