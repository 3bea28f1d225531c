package userns

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/moby/sys/user"
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

// maxLine is the longest line the parsers read: a group's member list may
// be long, so this is github.com/moby/sys/user's own limit for group files.
const maxLine = 1 << 20

// The parsers decode each line with github.com/moby/sys/user and then make
// sure the line says what the library read. The library is lenient by
// design: it reads an id it cannot convert as 0, ignores missing and extra
// fields, takes '#' comments in passwd and subuid files for entries, and
// reports no line numbers. That suits looking a name up (host and doctor use
// it directly); it does not suit allocation, where a half-understood file
// must not become a wrong allocation. So the lines are numbered and split
// here, each line is decoded alone, and every id field must be the plain
// decimal the library decoded (no sign, no leading zeros, no spaces).

// ParseSubIDs parses the subuid/subgid format "owner:start:count". Blank
// lines and lines starting with '#' are ignored. Any other malformed line is
// a *ParseError naming its line: a half-understood file must not become a
// wrong allocation.
func ParseSubIDs(r io.Reader) ([]SubIDEntry, error) {
	return parseLines(r, func(line string, f []string) (SubIDEntry, string) {
		if len(f) != 3 {
			return SubIDEntry{}, fmt.Sprintf("want owner:start:count, got %d fields", len(f))
		}
		s, err := decodeOne(user.ParseSubID, line)
		if err != nil {
			return SubIDEntry{}, err.Error()
		}
		if s.Name == "" {
			return SubIDEntry{}, "empty owner"
		}
		start, msg := checkID("start", f[1], s.SubID)
		if msg != "" {
			return SubIDEntry{}, msg
		}
		count, msg := checkID("count", f[2], s.Count)
		if msg != "" || count == 0 {
			return SubIDEntry{}, fmt.Sprintf("count %q is not a positive id count", f[2])
		}
		e := SubIDEntry{Owner: s.Name, Start: start, Count: count}
		if e.End() > maxID+1 {
			return SubIDEntry{}, fmt.Sprintf("range %d+%d runs past the largest id %d", start, count, uint32(maxID))
		}
		return e, ""
	})
}

// ParsePasswd parses /etc/passwd ("name:pw:uid:gid:gecos:home:shell").
// Blank lines, '#' comments and NIS compat lines ('+' or '-') are ignored.
func ParsePasswd(r io.Reader) ([]PasswdEntry, error) {
	return parseLines(r, func(line string, f []string) (PasswdEntry, string) {
		if len(f) < 4 {
			return PasswdEntry{}, fmt.Sprintf("want at least name:pw:uid:gid, got %d fields", len(f))
		}
		u, err := decodeOne(user.ParsePasswd, line)
		if err != nil {
			return PasswdEntry{}, err.Error()
		}
		uid, msg := checkID("uid", f[2], int64(u.Uid))
		if msg != "" {
			return PasswdEntry{}, msg
		}
		gid, msg := checkID("gid", f[3], int64(u.Gid))
		if msg != "" {
			return PasswdEntry{}, msg
		}
		return PasswdEntry{Name: u.Name, UID: uid, GID: gid}, ""
	})
}

// ParseGroup parses /etc/group ("name:pw:gid:members"), ignoring the same
// lines as ParsePasswd.
func ParseGroup(r io.Reader) ([]GroupEntry, error) {
	return parseLines(r, func(line string, f []string) (GroupEntry, string) {
		if len(f) < 3 {
			return GroupEntry{}, fmt.Sprintf("want at least name:pw:gid, got %d fields", len(f))
		}
		g, err := decodeOne(user.ParseGroup, line)
		if err != nil {
			return GroupEntry{}, err.Error()
		}
		gid, msg := checkID("gid", f[2], int64(g.Gid))
		if msg != "" {
			return GroupEntry{}, msg
		}
		return GroupEntry{Name: g.Name, GID: gid}, ""
	})
}

// parseLines calls entry with every line of r that is not blank, a '#'
// comment or an NIS compat line, trimmed, and its ':'-separated fields. An
// entry's message becomes a *ParseError naming the line.
func parseLines[T any](r io.Reader, entry func(line string, fields []string) (T, string)) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		e, msg := entry(line, strings.Split(line, ":"))
		if msg != "" {
			return nil, &ParseError{n, msg}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return out, nil
}

// decodeOne decodes a single non-blank line with one of the library's
// parsers, which give exactly one entry for it.
func decodeOne[T any](parse func(io.Reader) ([]T, error), line string) (T, error) {
	var zero T
	es, err := parse(strings.NewReader(line))
	if err != nil {
		return zero, err
	}
	if len(es) != 1 {
		return zero, fmt.Errorf("decoded %d entries from one line", len(es))
	}
	return es[0], nil
}

// checkID accepts an id field only when it is the plain decimal the library
// decoded (which reads what it cannot convert as 0) and lies in 0..maxID;
// otherwise it returns the message.
func checkID(what, field string, decoded int64) (uint32, string) {
	if strconv.FormatInt(decoded, 10) != field || decoded < 0 || decoded > maxID {
		return 0, fmt.Sprintf("%s: %q is not an id in 0..%d", what, field, uint32(maxID))
	}
	return uint32(decoded), ""
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
