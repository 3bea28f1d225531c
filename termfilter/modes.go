package termfilter

import (
	"bytes"
	"strconv"
)

// modeDefault is a terminal mode and its default (true: set).
type modeDefault struct {
	n   int
	def bool
}

// privateModes are the DEC private modes (CSI ? n h / l) a program may
// leave changed when it dies: what Restore puts back. The alternate screens
// come first: leaving one restores the main screen, on which the other
// modes are then reset.
var privateModes = []modeDefault{
	// the alternate screens
	{1049, false},
	{1047, false},
	{47, false},
	// application cursor keys, autowrap, a visible cursor
	{1, false},
	{7, true},
	{25, true},
	// mouse reporting, its encodings, focus events
	{9, false},
	{1000, false},
	{1001, false},
	{1002, false},
	{1003, false},
	{1005, false},
	{1006, false},
	{1015, false},
	{1016, false},
	{1004, false},
	// bracketed paste, synchronized output
	{2004, false},
	{2026, false},
}

// ansiModes are the ANSI modes (CSI n h / l) Restore puts back: insert
// mode and automatic newline.
var ansiModes = []modeDefault{{4, false}, {20, false}}

// modes remembers what the program changed of the terminal's state that
// outlives it, from the sequences that passed.
type modes struct {
	private   map[int]bool
	ansi      map[int]bool
	sgr       bool // attributes or colours set
	region    bool // a scroll region set
	keypad    bool // application keypad (ESC =)
	charset   bool // another character set designated or shifted in
	cursor    bool // the cursor's shape changed (DECSCUSR)
	kittyKeys int  // keyboard-protocol levels pushed (CSI > flags u)
	otherKeys bool // xterm modifyOtherKeys set (CSI > 4 ; n m)
}

func (m *modes) control(b byte) {
	if b == 0x0e { // SO: G1 shifted in
		m.charset = true
	}
}

func (m *modes) escape(seq []byte) {
	switch {
	case len(seq) == 2 && seq[1] == '=':
		m.keypad = true
	case len(seq) == 2 && seq[1] == '>':
		m.keypad = false
	case len(seq) == 3 && bytes.IndexByte([]byte("()*+"), seq[1]) >= 0 && seq[2] != 'B':
		m.charset = true
	}
}

// csi records a passed CSI sequence; params are the bytes between ESC [
// and the final byte.
func (m *modes) csi(params []byte, final byte) {
	switch final {
	case 'h', 'l':
		m.setModes(params, final == 'h')
	case 'm':
		switch {
		case bytes.Equal(params, []byte(">4")) || bytes.HasPrefix(params, []byte(">4;")):
			m.otherKeys = !bytes.Equal(params, []byte(">4")) && !bytes.Equal(params, []byte(">4;0"))
		case len(params) > 0 && params[0] >= '<':
			// another private SGR-like sequence: nothing to undo
		default:
			m.sgr = len(params) > 0 && !bytes.Equal(params, []byte("0"))
		}
	case 'r':
		m.region = len(params) > 0 && params[0] != '?'
	case 'q':
		m.cursor = m.cursor || bytes.HasSuffix(params, []byte(" "))
	case 'u':
		m.keyboard(params)
	}
}

func (m *modes) setModes(params []byte, set bool) {
	table, private := &m.ansi, false
	if len(params) > 0 && params[0] == '?' {
		table, private, params = &m.private, true, params[1:]
	}
	for f := range bytes.SplitSeq(params, []byte(";")) {
		n, err := strconv.Atoi(string(f))
		if err != nil {
			continue
		}
		if *table == nil {
			*table = map[int]bool{}
		}
		if private && (n == 1049 || n == 1047 || n == 47) && set {
			// a program that switches screens leaves only one to undo
			delete(*table, 1049)
			delete(*table, 1047)
			delete(*table, 47)
		}
		(*table)[n] = set
	}
}

// keyboard follows the kitty keyboard protocol's stack: CSI > flags u
// pushes, CSI < n u pops n (default 1).
func (m *modes) keyboard(params []byte) {
	switch {
	case len(params) > 0 && params[0] == '>':
		m.kittyKeys++
	case len(params) > 0 && params[0] == '<':
		n, err := strconv.Atoi(string(params[1:]))
		if err != nil || n < 1 {
			n = 1
		}
		m.kittyKeys = max(0, m.kittyKeys-n)
	}
}

// restore returns the sequences that undo what the program left changed,
// in an order that leaves the main screen's content and the cursor where
// the program left them: no RIS (which clears the scrollback on some
// terminals) and no clearing of any kind.
func (m *modes) restore() []byte {
	var b []byte
	for _, pm := range privateModes {
		if v, ok := m.private[pm.n]; ok && v != pm.def {
			b = append(b, "\x1b[?"+strconv.Itoa(pm.n)+onOff(pm.def)...)
		}
	}
	for _, am := range ansiModes {
		if v, ok := m.ansi[am.n]; ok && v != am.def {
			b = append(b, "\x1b["+strconv.Itoa(am.n)+onOff(am.def)...)
		}
	}
	b = appendIf(b, m.sgr, "\x1b[0m")
	b = appendIf(b, m.region, "\x1b7\x1b[r\x1b8") // DECSTBM homes the cursor: save and restore it around
	b = appendIf(b, m.keypad, "\x1b>")
	b = appendIf(b, m.charset, "\x0f\x1b(B")
	b = appendIf(b, m.cursor, "\x1b[0 q")
	if m.kittyKeys > 0 {
		b = append(b, "\x1b[<"+strconv.Itoa(m.kittyKeys)+"u"...)
	}
	b = appendIf(b, m.otherKeys, "\x1b[>4;0m")
	return b
}

func onOff(set bool) string {
	if set {
		return "h"
	}
	return "l"
}

func appendIf(b []byte, cond bool, s string) []byte {
	if cond {
		return append(b, s...)
	}
	return b
}
