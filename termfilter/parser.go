package termfilter

import "bytes"

// The parser follows the states of the DEC/ANSI parser that terminals
// implement (vt100.net/emu/dec_ansi_parser), reduced to what the filter
// must tell apart. Its one invariant: every byte it emits leaves the
// terminal in its ground state, except inside a UTF-8 character. A sequence
// is emitted only whole, after its final byte; a dropped one is never
// emitted at all, so the terminal never enters it.

type state uint8

const (
	ground   state = iota
	escape         // after ESC
	escInter       // ESC and intermediate bytes
	csi            // ESC [ and parameters, held in seq until the final byte
	csiDrop        // a CSI being dropped (8-bit introducer, or too long)
	str            // inside an OSC, DCS, SOS, PM or APC string: dropped
	strEsc         // ESC inside a string: ST, or the start of a new sequence
)

// kind is the kind of a string.
type kind uint8

const (
	kindOSC kind = iota
	kindDCS
	kindSOS
	kindPM
	kindAPC
)

const (
	enq = 0x05
	bel = 0x07
	can = 0x18
	sub = 0x1a
	esc = 0x1b
	del = 0x7f
	st8 = 0x9c // ST, 8-bit form
)

type parser struct {
	st state
	// cont is how many UTF-8 continuation bytes are still expected; c2 is
	// set while a 0xc2 lead is held back, since 0xc2 0x80–0x9f encodes a
	// C1 control.
	cont int
	c2   bool
	seq  []byte // the ESC or CSI sequence being read (at most MaxSequence)

	strKind kind
	strLen  int
	osc     oscNumber

	modes modes
	stats *Stats
	// oneWay drops the queries too (see NewOneWay).
	oneWay bool
}

// oscNumber reads the number that starts an OSC string (52, 0, 2, …).
type oscNumber struct {
	n      int
	digits int
	done   bool
	bad    bool
}

func (o *oscNumber) add(b byte) {
	switch {
	case o.done:
	case b >= '0' && b <= '9' && o.digits < 6:
		o.n, o.digits = o.n*10+int(b-'0'), o.digits+1
	case b == ';':
		o.done = true
	default:
		o.done, o.bad = true, true
	}
}

func (o oscNumber) is(n ...int) bool {
	for _, x := range n {
		if !o.bad && o.digits > 0 && o.n == x {
			return true
		}
	}
	return false
}

func (p *parser) feed(out, in []byte) []byte {
	for i := 0; i < len(in); i++ {
		if p.st == ground && !p.c2 && p.cont == 0 {
			// the common case: a run of plain text, copied at once
			j := i
			for j < len(in) && plain(in[j]) {
				j++
			}
			out = append(out, in[i:j]...)
			if i = j; i == len(in) {
				break
			}
		}
		out = p.byte(out, in[i])
	}
	return out
}

// plain reports whether b is printable ASCII or one of the controls that
// only move the cursor, to be passed on with no state to change.
func plain(b byte) bool {
	return (b >= 0x20 && b < del) || b == '\n' || b == '\r' || b == '\t'
}

// byte decodes UTF-8 just far enough to tell a C1 control (raw, or encoded
// as U+0080–U+009F) from the continuation byte of a character.
func (p *parser) byte(out []byte, b byte) []byte {
	if p.c2 {
		p.c2 = false
		if b >= 0x80 && b <= 0x9f {
			return p.c1(out, b)
		}
		out = p.other(out, 0xc2)
		if b >= 0xa0 && b <= 0xbf {
			return p.other(out, b)
		}
	}
	if p.cont > 0 {
		if b >= 0x80 && b <= 0xbf {
			p.cont--
			return p.other(out, b)
		}
		p.cont = 0
	}
	switch {
	case b < 0x80:
		return p.ascii(out, b)
	case b <= 0x9f:
		return p.c1(out, b)
	case b == 0xc2:
		p.c2 = true
		return out
	case b >= 0xc3 && b <= 0xdf:
		p.cont = 1
	case b >= 0xe0 && b <= 0xef:
		p.cont = 2
	case b >= 0xf0 && b <= 0xf4:
		p.cont = 3
	}
	return p.other(out, b)
}

func (p *parser) ascii(out []byte, b byte) []byte {
	switch p.st {
	case ground:
		return p.groundByte(out, b)
	case escape, escInter:
		return p.escByte(out, b)
	case csi, csiDrop:
		return p.csiByte(out, b)
	case str:
		return p.strByte(out, b)
	case strEsc:
		p.endString()
		if b == '\\' {
			return out
		}
		p.startEscape()
		return p.escByte(out, b)
	}
	return out
}

func (p *parser) groundByte(out []byte, b byte) []byte {
	if b == esc {
		p.startEscape()
		return out
	}
	return p.control(out, b)
}

// control passes a C0 control or printable byte, except ENQ (which makes
// the terminal send its answerback) on a one-way terminal.
func (p *parser) control(out []byte, b byte) []byte {
	if b == enq && p.oneWay {
		p.stats.Query++
		return out
	}
	p.modes.control(b)
	return append(out, b)
}

func (p *parser) startEscape() {
	p.st = escape
	p.seq = append(p.seq[:0], esc)
}

// interrupt handles the bytes that act inside any ESC or CSI sequence: ESC
// starts over, CAN and SUB cancel, other C0 controls are executed where
// they stand (emitted now: the terminal is in its ground state, since the
// sequence was not emitted yet), DEL is ignored. It reports whether b was
// one of them.
func (p *parser) interrupt(out []byte, b byte) ([]byte, bool) {
	switch {
	case b == esc:
		p.startEscape()
	case b == can || b == sub:
		p.st = ground
	case b < 0x20:
		out = p.control(out, b)
	case b == del:
	default:
		return out, false
	}
	return out, true
}

func (p *parser) escByte(out []byte, b byte) []byte {
	if out, done := p.interrupt(out, b); done {
		return out
	}
	if b <= 0x2f { // an intermediate byte
		if len(p.seq) >= MaxSequence {
			p.stats.Long++
			p.st = ground
			return out
		}
		p.seq = append(p.seq, b)
		p.st = escInter
		return out
	}
	if p.st == escape {
		if done, out2 := p.escapeFinal(out, b); done {
			return out2
		}
	} else if p.seq[1] == '%' {
		p.stats.Charset++ // ESC % …: leaves UTF-8
		p.st = ground
		return out
	}
	p.st = ground
	p.seq = append(p.seq, b)
	p.modes.escape(p.seq)
	return append(out, p.seq...)
}

// escapeFinal handles ESC followed directly by b: the introducers of CSI and
// of strings, a stray ST and RIS.
func (p *parser) escapeFinal(out []byte, b byte) (bool, []byte) {
	switch b {
	case '[':
		p.st = csi
		p.seq = append(p.seq, b)
	case ']':
		p.startString(kindOSC)
	case 'P':
		p.startString(kindDCS)
	case 'X':
		p.startString(kindSOS)
	case '^':
		p.startString(kindPM)
	case '_':
		p.startString(kindAPC)
	case '\\': // ST with no string: nothing to end
		p.st = ground
	case 'c':
		p.stats.Reset++
		p.st = ground
	case 'Z': // DECID: the terminal answers with its attributes
		if !p.oneWay {
			return false, out
		}
		p.stats.Query++
		p.st = ground
	default:
		return false, out
	}
	return true, out
}

func (p *parser) csiByte(out []byte, b byte) []byte {
	if out, done := p.interrupt(out, b); done {
		return out
	}
	if b < 0x40 { // a parameter or intermediate byte
		if p.st == csi && len(p.seq) >= MaxSequence {
			p.stats.Long++
			p.st = csiDrop
		}
		if p.st == csi {
			p.seq = append(p.seq, b)
		}
		return out
	}
	dropping := p.st == csiDrop
	p.st = ground
	if dropping || p.dropCSI(b) {
		return out
	}
	p.seq = append(p.seq, b)
	p.modes.csi(p.seq[2:len(p.seq)-1], b)
	return append(out, p.seq...)
}

// dropCSI decides on a complete CSI sequence (p.seq holds ESC [ and its
// parameters, final is its final byte) and counts the dropped ones.
func (p *parser) dropCSI(final byte) bool {
	params := p.seq[2:]
	switch {
	case final == 't':
		p.stats.Window++
	case final == 'i':
		p.stats.Printer++
	case final == 'J' && hasParam(params, "3"):
		p.stats.Scrollback++
	case p.oneWay && isQuery(params, final):
		p.stats.Query++
	default:
		return false
	}
	return true
}

// isQuery reports whether a CSI sequence asks the terminal to answer:
// device status and cursor reports (n), device attributes (c), DECREQTPARM
// (x), mode reports (DECRQM, $ p), XTVERSION (> q), the keyboard protocol's
// flags (? u) and graphics attributes (? S).
func isQuery(params []byte, final byte) bool {
	private := byte(0)
	if len(params) > 0 && params[0] >= '<' && params[0] <= '?' {
		private = params[0]
	}
	switch final {
	case 'n', 'c', 'x':
		return !bytes.ContainsFunc(params, func(r rune) bool { return r >= 0x20 && r <= 0x2f })
	case 'p':
		return bytes.HasSuffix(params, []byte("$"))
	case 'q':
		return private == '>'
	case 'u', 'S':
		return private == '?'
	}
	return false
}

// hasParam reports whether one of the ;-separated parameters is want,
// ignoring a private marker.
func hasParam(params []byte, want string) bool {
	start := 0
	if len(params) > 0 && params[0] >= '<' && params[0] <= '?' {
		start = 1
	}
	for i := start; i <= len(params); i++ {
		if i == len(params) || params[i] == ';' {
			if string(params[start:i]) == want {
				return true
			}
			start = i + 1
		}
	}
	return false
}

func (p *parser) startString(k kind) {
	p.st, p.strKind, p.strLen, p.osc = str, k, 0, oscNumber{}
}

func (p *parser) strByte(out []byte, b byte) []byte {
	switch b {
	case bel, can, sub:
		p.endString()
		return out
	case esc:
		p.st = strEsc
		return out
	}
	if p.strKind == kindOSC {
		p.osc.add(b)
	}
	return p.grow(out)
}

// grow counts one more dropped byte of a string and abandons the string at
// MaxString: the terminal never saw its introducer, so it is showing text.
func (p *parser) grow(out []byte) []byte {
	p.strLen++
	if p.strLen >= MaxString {
		p.stats.Unterminated++
		p.endString()
	}
	return out
}

// endString counts the string that ends and returns to the ground state.
func (p *parser) endString() {
	p.st = ground
	switch p.strKind {
	case kindOSC:
		switch {
		case p.osc.is(52):
			p.stats.Clipboard++
		case p.osc.is(0, 1, 2):
			p.stats.Title++
		default:
			p.stats.OSC++
		}
	case kindDCS:
		p.stats.DCS++
	case kindSOS:
		p.stats.SOS++
	case kindPM:
		p.stats.PM++
	case kindAPC:
		p.stats.APC++
	}
}

// other handles a byte of a UTF-8 character (or an invalid byte that is
// not a C1 control): text in the ground state, the end of an unfinished
// ESC or CSI sequence (which the terminal never saw) elsewhere.
func (p *parser) other(out []byte, b byte) []byte {
	switch p.st {
	case str:
		return p.grow(out)
	case strEsc:
		p.endString()
	case escape, escInter, csi, csiDrop:
		p.st = ground
	case ground:
	}
	return append(out, b)
}

// c1 handles an 8-bit C1 control: the introducers start what their ESC
// forms start (a CSI is dropped whole), ST ends a string, and every other
// C1 control is dropped.
func (p *parser) c1(out []byte, b byte) []byte {
	switch p.st {
	case str, strEsc:
		p.endString()
		if b == st8 {
			return out
		}
	case escape, escInter, csi, csiDrop:
		p.st = ground
	case ground:
	}
	switch b {
	case 0x9b:
		p.stats.C1++
		p.st = csiDrop
	case 0x9d:
		p.startString(kindOSC)
	case 0x90:
		p.startString(kindDCS)
	case 0x98:
		p.startString(kindSOS)
	case 0x9e:
		p.startString(kindPM)
	case 0x9f:
		p.startString(kindAPC)
	default:
		p.stats.C1++
	}
	return out
}
