package scripted

import (
	"strconv"
	"strings"
)

// MarkerPrefix starts the line a step's command prints last:
// "ABX-RESULT name=STEP rc=N KEY=VALUE…", values without spaces.
const MarkerPrefix = "ABX-RESULT"

// Marker is one parsed marker line.
type Marker struct {
	Name string
	// RC is the exit code of the attempt. A line without a numeric one is
	// not a marker (an agent echoing the command, printf format and all).
	RC     int
	Fields map[string]string
}

// FindMarker returns the last marker line for step in out, the tool
// output of that step. Agents may wrap, prefix or truncate a tool's output
// (codex adds its own header, a PTY turns \n into \r\n), so the line is
// looked for anywhere, token by token.
func FindMarker(out, step string) (Marker, bool) {
	var found Marker
	ok := false
	for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		i := strings.Index(line, MarkerPrefix+" ")
		if i < 0 {
			continue
		}
		m := parseMarker(line[i+len(MarkerPrefix)+1:])
		if m.Name == step && m.RC >= 0 { // without a number it is the command echoed, not its output
			found, ok = m, true
		}
	}
	return found, ok
}

func parseMarker(rest string) Marker {
	m := Marker{RC: -1, Fields: map[string]string{}}
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "name":
			m.Name = v
		case "rc":
			if n, err := strconv.Atoi(v); err == nil {
				m.RC = n
			}
		default:
			m.Fields[k] = v
		}
	}
	return m
}
