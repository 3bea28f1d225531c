package yamlfile

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// MaxErrors is the most problems one Decode reports; past it a last Error
// says how many more there were.
const MaxErrors = 10

// Error is one problem in a file: where it is and, when known, how to fix
// it.
type Error struct {
	File  string // the file's name as the caller gave it
	Line  int    // 1-based line, or 0 when not known
	Field string // dotted field path (limits.memory, accept[0].reason), or ""
	Msg   string // what is wrong
	Fix   string // how to fix it, or ""
}

// Error formats e as "FILE:LINE: FIELD: MSG; FIX", leaving out the parts
// that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: ", e.Field)
	}
	b.WriteString(e.Msg)
	if e.Fix != "" {
		b.WriteString("; " + e.Fix)
	}
	return b.String()
}

// Errors are the problems Decode found, in the order of their lines.
type Errors []*Error

// Error puts each problem on its own line.
func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// yamlLine is how go.yaml.in/yaml/v3 places its own syntax and type errors;
// it has no typed error with a line. This is the one place that reads it.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// fromYAML turns an error of the yaml library into Errors naming the file
// and, where yaml gave one, the line.
func fromYAML(file string, err error) Errors {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make(Errors, 0, len(msgs))
	for _, m := range msgs {
		e := &Error{File: file, Msg: strings.TrimPrefix(m, "yaml: ")}
		if sub := yamlLine.FindStringSubmatch(m); sub != nil {
			e.Line, _ = strconv.Atoi(sub[1])
			e.Msg = sub[2]
		}
		out = append(out, e)
	}
	return out
}

// maxShown bounds how much of a value or key a message repeats.
const maxShown = 64

// quote is s as a message shows a value from the file: quoted, with
// control characters escaped, and cut after maxShown runes.
func quote(s string) string {
	if r := []rune(s); len(r) > maxShown {
		return strconv.Quote(string(r[:maxShown])) + "…"
	}
	return strconv.Quote(s)
}

// printable is a field path as a message shows it: as is when it is short
// and plain, else quoted and cut like a value. A key is whatever the file
// says, and the terminal must not interpret it.
func printable(path string) string {
	if len(path) <= 4*maxShown && strings.IndexFunc(path, notPlain) < 0 {
		return path
	}
	return quote(path)
}

func notPlain(r rune) bool {
	return !unicode.IsPrint(r) || r == '"' || r == '\\'
}
