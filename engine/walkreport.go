//go:build linux

package engine

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a walk reports: bounded lists, and entry names made safe to print.

// maxListed bounds each list a walk reports (skipped entries, errors).
const maxListed = 32

// errSkip marks an entry the walk does not enter (another mount).
var errSkip = errors.New("skipped")

// skipError says why an entry was not entered; it is errSkip.
type skipError string

func (e skipError) Error() string   { return string(e) }
func (e skipError) Is(t error) bool { return t == errSkip }

// list is a bounded list of lines with a count of those left out.
type list struct {
	items []string
	more  int
}

func (l *list) add(s string) {
	if len(l.items) < maxListed {
		l.items = append(l.items, s)
		return
	}
	l.more++
}

// lines returns the items, with "… and N more" when some were left out.
func (l *list) lines() []string {
	if l.more == 0 {
		return l.items
	}
	return append(append([]string{}, l.items...), fmt.Sprintf("… and %d more", l.more))
}

func (l *list) len() int { return len(l.items) + l.more }

// printable escapes what a file name may hold that a terminal or a log
// reader would act on: control characters, invalid UTF-8, backslashes.
func printable(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", name[i])
		case r == '\\':
			b.WriteString("\\\\")
		case unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
