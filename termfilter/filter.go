// Package termfilter stands between what a sandboxed program writes and the
// user's terminal, and removes the control sequences that act beyond the
// program's own screen.
//
// A terminal is a device with side effects: an OSC 52 sequence writes the
// user's clipboard (the next paste into a shell runs what the agent chose),
// OSC 0/1/2 set the window title (which some terminals report back as
// input), DCS strings reach terminal extensions (DECRQSS, tmux passthrough,
// Sixel), APC, PM and SOS are the same kind of hidden channel, ESC c (RIS)
// resets the terminal and on some clears the scrollback, CSI 3 J erases the
// scrollback (where agentbox's own earlier lines are), CSI … t moves,
// resizes and reports the window and CSI … i drives a printer. Writer drops
// every one of them, counted in Stats.
//
// What passes, so that the agents' full-screen interfaces work: text
// (UTF-8), C0 controls, every other CSI sequence (colours and attributes,
// cursor movement, CSI 2 J and other screen and line erasing, scroll
// regions, the alternate screen, mouse and bracketed-paste modes, queries
// such as the cursor position report, whose answers reach the agent, never
// the user's shell) and plain ESC sequences (save/restore cursor, keypad
// modes, character sets), except ESC % (which switches the terminal's
// encoding away from UTF-8, where this filter's reading would no longer be
// the terminal's).
//
// The filter streams: a sequence split across writes at any byte is
// recognised, strings may end in BEL, ESC \ or ST (0x9c), and the 8-bit C1
// forms of the introducers (0x9b CSI, 0x9d OSC, 0x90 DCS, 0x98 SOS, 0x9e PM,
// 0x9f APC), raw or encoded as UTF-8 (U+0080–U+009F), are treated like their
// ESC forms, except that a CSI introduced by an 8-bit C1 control is dropped
// too (no program that works on a UTF-8 terminal needs one). A dropped
// string's bytes are not kept at all; the only state held between writes is
// a CSI or ESC sequence still being read, at most MaxSequence bytes. A
// string with no terminator after MaxString bytes is abandoned: the filter
// goes back to passing text, which is what the terminal sees anyway, since
// it never got the introducer.
//
// Queries (device attributes, cursor position and mode reports) pass to a
// terminal the program reads, where the answers reach the program. On a
// terminal it does not read (NewOneWay: its output is copied to the
// terminal, its input comes from elsewhere) the answers would be typed into
// the user's shell, so the queries are dropped too. Turn the filter off
// with agentbox run --raw-terminal.
package termfilter

import (
	"io"
	"sync"
)

// MaxSequence bounds a CSI or ESC sequence; a longer one is dropped whole.
const MaxSequence = 256

// MaxString bounds how much of an unterminated OSC, DCS, APC, PM or SOS
// string is dropped before the filter passes text again.
const MaxString = 64 << 10

// Writer filters what is written to it and writes the rest to the
// underlying writer. It is safe for concurrent use: the agent's stdout and
// stderr, when both go to one terminal, share one Writer, so that its
// reading of the byte stream is the terminal's.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	raw   bool
	p     parser
	out   []byte
	stats Stats
}

// New returns a Writer that filters into w.
func New(w io.Writer) *Writer {
	f := &Writer{w: w}
	f.p.stats = &f.stats
	return f
}

// NewOneWay returns a Writer for a terminal whose answers the program
// cannot read (its stdin is not that terminal): it also drops the queries
// that make a terminal answer (ENQ, DECID, device attributes, status,
// cursor and mode reports, XTVERSION), whose answers would otherwise be
// read as typed input by whatever reads the terminal next, the user's
// shell.
func NewOneWay(w io.Writer) *Writer {
	f := New(w)
	f.p.oneWay = true
	return f
}

// NewRaw returns a Writer that passes everything to w unchanged and only
// follows the modes set, for Restore (agentbox run --raw-terminal).
func NewRaw(w io.Writer) *Writer {
	f := New(w)
	f.raw = true
	return f
}

// Write filters p and writes what passes. It reports len(p) written unless
// the underlying writer failed.
func (f *Writer) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out = f.p.feed(f.out[:0], p)
	out := f.out
	if f.raw {
		out = p
	}
	if len(out) == 0 {
		return len(p), nil
	}
	if _, err := f.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Restore returns the sequences that undo the terminal modes the program
// left changed (alternate screen, hidden cursor, mouse and bracketed-paste
// reporting, attributes, keypad, character set, keyboard protocol, …), and
// nothing when it changed none. It never clears the screen or the
// scrollback. A sequence still unfinished is forgotten: its bytes were
// never written.
func (f *Writer) Restore() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.p.modes.restore()
}

// Stats reports what was dropped so far.
func (f *Writer) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}
