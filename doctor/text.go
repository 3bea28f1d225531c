package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// ANSI colours for statuses, used only on a terminal.
var statusColor = map[Status]string{Pass: "\033[32m", Warn: "\033[33m", Fail: "\033[31m", Unknown: "\033[35m"}

const colorReset = "\033[0m"

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a person: a table of checks with the fix
// under each one that has one, then the layers, the residuals and the
// verdict. color adds ANSI colours (for a terminal only).
func WriteText(w io.Writer, r Report, color bool) error {
	ew := &errWriter{w: w}
	paint := func(s Status) string {
		pad := fmt.Sprintf("%-7s", s)
		if !color {
			return pad
		}
		return statusColor[s] + pad + colorReset
	}
	ew.printf("agentbox doctor: %s, kernel %s, user %s (euid %d)\n\n", orUnknown(r.Host.OS), orUnknown(r.Host.Kernel), orUnknown(r.Host.User), r.Host.EUID)
	// tabwriter buffers until Flush, which returns the first write error.
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintf(tw, "STATUS \tCHECK\tDETAIL\n")
	for _, c := range r.Checks {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", paint(c.Status), c.ID, oneLine(c.Detail))
		if c.Fix != "" {
			_, _ = fmt.Fprintf(tw, "\t\tfix: %s\n", oneLine(c.Fix))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ew.printf("\nlayers:\n")
	for _, l := range r.Layers {
		state := "holds"
		if !l.Holds {
			state = "DOES NOT HOLD"
		}
		ew.printf("  %-15s %-13s %s\n", l.Name, state, oneLine(l.Detail))
	}
	ew.printf("\nresiduals:\n")
	if len(r.Residuals) == 0 {
		ew.printf("  none\n")
	}
	for _, res := range r.Residuals {
		ew.printf("  %s: %s\n", res.Code, oneLine(res.Detail))
	}
	writeModes(ew, r.Modes)
	ew.printf("\nverdict: %s: %s\n", r.Verdict.Status, r.Verdict.Summary)
	return ew.err
}

// oneLine keeps a detail on its table row; spaces are kept as they are, so
// a fix line stays exact.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\t", " ").Replace(s) }

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// printf writes; a failure is kept in e.err, which WriteText returns.
func (e *errWriter) printf(format string, args ...any) { _, _ = fmt.Fprintf(e, format, args...) }

// writeModes lists what agentbox run does with each runtime, with the
// default root and with --rootfs.
func writeModes(ew *errWriter, modes []RuntimeMode) {
	if len(modes) == 0 {
		return
	}
	ew.printf("\nruntime modes (what agentbox run does; the verdict is about the default root on the runtime marked *):\n")
	for _, m := range modes {
		mark := " "
		if m.Verdict {
			mark = "*"
		}
		state := "launches"
		if !m.Holds {
			state = "REFUSES"
		}
		ew.printf(" %s%-5s %-9s %-9s %s\n", mark, m.Runtime, m.Mode, state, oneLine(m.Summary()))
	}
}
