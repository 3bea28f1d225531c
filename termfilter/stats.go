package termfilter

import (
	"fmt"
	"strings"
)

// Stats counts what a Writer dropped, by kind.
type Stats struct {
	Clipboard  int `json:"clipboard,omitempty"`  // OSC 52: clipboard writes and reads
	Title      int `json:"title,omitempty"`      // OSC 0, 1, 2: window and icon titles
	OSC        int `json:"osc,omitempty"`        // every other OSC (colours, hyperlinks, notifications, …)
	DCS        int `json:"dcs,omitempty"`        // DCS strings (DECRQSS, Sixel, tmux passthrough, …)
	APC        int `json:"apc,omitempty"`        // APC strings (kitty graphics, …)
	PM         int `json:"pm,omitempty"`         // privacy messages
	SOS        int `json:"sos,omitempty"`        // SOS strings
	Reset      int `json:"reset,omitempty"`      // ESC c (RIS)
	Scrollback int `json:"scrollback,omitempty"` // CSI 3 J: erase the scrollback
	Window     int `json:"window,omitempty"`     // CSI … t: window moves, resizes, reports, title stack
	Printer    int `json:"printer,omitempty"`    // CSI … i: media copy
	Charset    int `json:"charset,omitempty"`    // ESC % …: leave UTF-8
	C1         int `json:"c1,omitempty"`         // other 8-bit C1 controls, 8-bit CSI sequences included
	Long       int `json:"long,omitempty"`       // ESC or CSI sequences longer than MaxSequence
	Query      int `json:"query,omitempty"`      // queries the terminal would answer, on a one-way terminal (NewOneWay)
	// Unterminated counts the strings abandoned at MaxString (each is also
	// counted by its kind).
	Unterminated int `json:"unterminated,omitempty"`
}

// Total is the number of sequences dropped.
func (s Stats) Total() int {
	return s.Clipboard + s.Title + s.OSC + s.DCS + s.APC + s.PM + s.SOS + s.Reset + s.Scrollback + s.Window + s.Printer + s.Charset + s.C1 + s.Long + s.Query
}

// Add returns the sum of s and o.
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Clipboard: s.Clipboard + o.Clipboard, Title: s.Title + o.Title, OSC: s.OSC + o.OSC,
		DCS: s.DCS + o.DCS, APC: s.APC + o.APC, PM: s.PM + o.PM, SOS: s.SOS + o.SOS,
		Reset: s.Reset + o.Reset, Scrollback: s.Scrollback + o.Scrollback, Window: s.Window + o.Window,
		Printer: s.Printer + o.Printer, Charset: s.Charset + o.Charset, C1: s.C1 + o.C1, Long: s.Long + o.Long, Query: s.Query + o.Query,
		Unterminated: s.Unterminated + o.Unterminated,
	}
}

// String names what was dropped, e.g. "2 clipboard writes (OSC 52), 1
// window title (OSC 0/1/2)"; empty when nothing was.
func (s Stats) String() string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{
		{s.Clipboard, "clipboard access (OSC 52)"},
		{s.Title, "window title (OSC 0/1/2)"},
		{s.OSC, "other OSC"},
		{s.DCS, "DCS"},
		{s.APC, "APC"},
		{s.PM, "PM"},
		{s.SOS, "SOS"},
		{s.Reset, "terminal reset (ESC c)"},
		{s.Scrollback, "scrollback erase (CSI 3 J)"},
		{s.Window, "window operation (CSI t)"},
		{s.Printer, "printer control (CSI i)"},
		{s.Charset, "encoding switch (ESC %)"},
		{s.C1, "8-bit C1 control"},
		{s.Long, "overlong sequence"},
		{s.Query, "terminal query"},
		{s.Unterminated, "of them unterminated"},
	} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return strings.Join(parts, ", ")
}
