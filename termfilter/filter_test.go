package termfilter

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var filterTests = []struct {
	name string
	in   string
	want string
	drop Stats
}{
	{"text", "plain text\r\n", "plain text\r\n", Stats{}},
	{"utf-8", "héllo → 世界 😀 “quoted” ©", "héllo → 世界 😀 “quoted” ©", Stats{}},
	{"C0 controls", "a\tb\x07c\bd\r\n", "a\tb\x07c\bd\r\n", Stats{}},
	{"colours", "\x1b[31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[m", "\x1b[31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[m", Stats{}},
	{"cursor movement", "\x1b[H\x1b[10;20H\x1b[2A\x1b[K", "\x1b[H\x1b[10;20H\x1b[2A\x1b[K", Stats{}},
	{"screen clear kept", "\x1b[2J\x1b[J\x1b[1J", "\x1b[2J\x1b[J\x1b[1J", Stats{}},
	{"alternate screen", "\x1b[?1049hTUI\x1b[?1049l", "\x1b[?1049hTUI\x1b[?1049l", Stats{}},
	{"modes and queries", "\x1b[?25l\x1b[?1000h\x1b[?2004h\x1b[6n\x1b[c\x1b[10;20r", "\x1b[?25l\x1b[?1000h\x1b[?2004h\x1b[6n\x1b[c\x1b[10;20r", Stats{}},
	{"escape sequences", "\x1b7\x1b8\x1b(0q\x1b(B\x1b=\x1b>\x1bM", "\x1b7\x1b8\x1b(0q\x1b(B\x1b=\x1b>\x1bM", Stats{}},

	{"OSC 52 BEL", "a\x1b]52;c;aGVsbG8=\x07b", "ab", Stats{Clipboard: 1}},
	{"OSC 52 ST", "a\x1b]52;c;aGVsbG8=\x1b\\b", "ab", Stats{Clipboard: 1}},
	{"OSC 52 query", "\x1b]52;c;?\x07", "", Stats{Clipboard: 1}},
	{"OSC 0 title", "\x1b]0;owned\x07x", "x", Stats{Title: 1}},
	{"OSC 1 and 2", "\x1b]1;icon\x1b\\\x1b]2;window\x07", "", Stats{Title: 2}},
	{"OSC 8 hyperlink", "\x1b]8;;https://example.invalid\x1b\\link\x1b]8;;\x1b\\", "link", Stats{OSC: 2}},
	{"OSC colours", "\x1b]11;?\x07\x1b]4;1;#ff0000\x07", "", Stats{OSC: 2}},
	{"OSC with no number", "\x1b]x52;c;AA\x07", "", Stats{OSC: 1}},
	{"DCS", "\x1bP$qm\x1b\\after", "after", Stats{DCS: 1}},
	{"APC", "\x1b_Gf=100;AAAA\x1b\\", "", Stats{APC: 1}},
	{"PM", "\x1b^private\x1b\\", "", Stats{PM: 1}},
	{"SOS", "\x1bXstring\x1b\\", "", Stats{SOS: 1}},
	{"RIS", "a\x1bcb", "ab", Stats{Reset: 1}},
	{"scrollback erase", "\x1b[3J\x1b[?3J", "", Stats{Scrollback: 2}},
	{"window operations", "\x1b[8;100;300t\x1b[21t\x1b[22;0t", "", Stats{Window: 3}},
	{"printer", "\x1b[5i\x1b[?5i", "", Stats{Printer: 2}},
	{"encoding switch", "\x1b%@x\x1b%G", "x", Stats{Charset: 2}},
	{"stray ST", "a\x1b\\b", "ab", Stats{}},

	{"8-bit OSC", "a\x9d52;c;eA==\x07b", "ab", Stats{Clipboard: 1}},
	{"8-bit OSC, 8-bit ST", "\x9d0;t\x9cx", "x", Stats{Title: 1}},
	{"8-bit DCS", "\x90$qm\x9cx", "x", Stats{DCS: 1}},
	{"8-bit SOS PM APC", "\x98a\x9c\x9eb\x9c\x9fc\x9c", "", Stats{SOS: 1, PM: 1, APC: 1}},
	{"8-bit CSI", "\x9b31mx\x9b3J", "x", Stats{C1: 2}},
	{"other 8-bit C1", "a\x84b\x85c", "abc", Stats{C1: 2}},
	{"UTF-8 encoded OSC", "\xc2\x9d0;t\xc2\x9cx", "x", Stats{Title: 1}},
	{"UTF-8 encoded CSI", "\xc2\x9b2Jx", "x", Stats{C1: 1}},
	{"0x9d as a continuation", "\xe2\x80\x9d \xf0\x9f\x98\x80", "\xe2\x80\x9d \xf0\x9f\x98\x80", Stats{}},
	{"lone 0xc2", "\xc2a\xc2", "\xc2a", Stats{}},
	{"invalid bytes pass", "\xff\xfe\xa0", "\xff\xfe\xa0", Stats{}},

	{"ESC ends a string", "\x1b]0;x\x1b[31mred", "\x1b[31mred", Stats{Title: 1}},
	{"CAN ends a string", "\x1b]0;x\x18y", "y", Stats{Title: 1}},
	{"C0 inside CSI", "\x1b[1\r;2H", "\r\x1b[1;2H", Stats{}},
	{"ESC restarts CSI", "\x1b[31\x1b[32m", "\x1b[32m", Stats{}},
	{"CAN cancels CSI", "\x1b[31\x18x", "x", Stats{}},
	{"text ends CSI", "\x1b[31é", "é", Stats{}},
	{"C1 inside CSI", "\x1b[31\x9d0;t\x07x", "x", Stats{Title: 1}},
	{"long CSI", "\x1b[" + strings.Repeat("1;", MaxSequence) + "mx", "x", Stats{Long: 1}},
	{"long ESC", "\x1b" + strings.Repeat(" ", MaxSequence) + "Fx", "Fx", Stats{Long: 1}},
	{
		"unterminated OSC over the cap", "\x1b]52;c;" + strings.Repeat("A", MaxString) + "tail",
		strings.Repeat("A", len("52;c;")) + "tail",
		Stats{Clipboard: 1, Unterminated: 1},
	},
	{"unterminated OSC under the cap", "x\x1b]52;c;AAAA", "x", Stats{}},
}

func filter(t *testing.T, chunks ...string) (string, Stats) {
	t.Helper()
	var b bytes.Buffer
	f := New(&b)
	for _, c := range chunks {
		if n, err := f.Write([]byte(c)); err != nil || n != len(c) {
			t.Fatalf("Write(%q) = %d, %v", c, n, err)
		}
	}
	return b.String(), f.Stats()
}

func TestFilter(t *testing.T) {
	for _, tt := range filterTests {
		t.Run(tt.name, func(t *testing.T) {
			got, stats := filter(t, tt.in)
			if got != tt.want {
				t.Errorf("filter(%q) = %q, want %q", abbrev(tt.in), abbrev(got), abbrev(tt.want))
			}
			if diff := cmp.Diff(tt.drop, stats); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}

// A sequence split across writes at any byte is read as if it came whole.
func TestFilterSplitAtEveryByte(t *testing.T) {
	for _, tt := range filterTests {
		if len(tt.in) > 2048 {
			continue // the cap cases: covered by the byte-at-a-time run below
		}
		for i := 0; i <= len(tt.in); i++ {
			got, stats := filter(t, tt.in[:i], tt.in[i:])
			if got != tt.want || stats != tt.drop {
				t.Errorf("%s split at %d: got %q (%+v), want %q (%+v)", tt.name, i, got, stats, tt.want, tt.drop)
			}
		}
	}
	for _, tt := range filterTests {
		chunks := make([]string, len(tt.in))
		for i := 0; i < len(tt.in); i++ {
			chunks[i] = tt.in[i : i+1]
		}
		if got, stats := filter(t, chunks...); got != tt.want || stats != tt.drop {
			t.Errorf("%s byte by byte: got %q (%+v), want %q", tt.name, abbrev(got), stats, abbrev(tt.want))
		}
	}
}

func TestRestore(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"nothing changed", "text\x1b[2J\x1b[H", ""},
		{"full-screen program still running", "\x1b[?1049h\x1b[?25l\x1b[?1000h\x1b[?1006h\x1b[?2004h\x1b[31m", "\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1006l\x1b[?2004l\x1b[0m"},
		{"program that cleaned up", "\x1b[?1049h\x1b[?25l\x1b[1m\x1b[?25h\x1b[?1049l\x1b[0m", ""},
		{"alternate screen by 1047", "\x1b[?1047h", "\x1b[?1047l"},
		{"screens switched", "\x1b[?47h\x1b[?1049h", "\x1b[?1049l"},
		{"autowrap off, insert mode", "\x1b[?7l\x1b[4h", "\x1b[?7h\x1b[4l"},
		{"scroll region, keypad, charset", "\x1b[5;10r\x1b=\x1b(0", "\x1b7\x1b[r\x1b8\x1b>\x0f\x1b(B"},
		{"shift out", "\x0e", "\x0f\x1b(B"},
		{"cursor shape", "\x1b[5 q", "\x1b[0 q"},
		{"keyboard protocol", "\x1b[>1u\x1b[>3u\x1b[<u\x1b[>4;2m", "\x1b[<1u\x1b[>4;0m"},
		{"dropped sequences change nothing", "\x1b]0;t\x07\x9b?1049h", ""},
	}
	for _, tt := range tests {
		f := New(&bytes.Buffer{})
		_, _ = f.Write([]byte(tt.in))
		if got := string(f.Restore()); got != tt.want {
			t.Errorf("%s: Restore() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRawPassesEverythingAndStillRestores(t *testing.T) {
	in := "\x1b]52;c;aGVsbG8=\x07\x1b[?1049h\x9b3J"
	var b bytes.Buffer
	f := NewRaw(&b)
	if _, err := f.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if b.String() != in {
		t.Errorf("raw writer changed %q into %q", in, b.String())
	}
	if got := string(f.Restore()); got != "\x1b[?1049l" {
		t.Errorf("Restore() = %q, want the alternate screen left", got)
	}
}

// On a terminal the program does not read, the queries are dropped too:
// their answers would be typed into the user's shell.
func TestOneWayDropsQueries(t *testing.T) {
	in := "a\x05\x1b[6n\x1b[c\x1b[>c\x1b[=c\x1b[?6n\x1b[5n\x1b[x\x1b[?2004$p\x1b[>q\x1b[?u\x1b[?1;1S\x1bZb\x1b[31mc\x1b[2$x"
	var b bytes.Buffer
	f := NewOneWay(&b)
	_, _ = f.Write([]byte(in))
	if want := "ab\x1b[31mc\x1b[2$x"; b.String() != want {
		t.Errorf("one-way filter: %q, want %q", b.String(), want)
	}
	if got := f.Stats(); got != (Stats{Query: 13}) {
		t.Errorf("stats %+v, want 13 queries", got)
	}
	two, _ := filter(t, in)
	if two != in {
		t.Errorf("the two-way filter dropped queries: %q", two)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("terminal gone") }

func TestWriteReportsTheUnderlyingError(t *testing.T) {
	f := New(failWriter{})
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("Write to a failing writer returned nil")
	}
	if _, err := f.Write([]byte("\x1b]0;")); err != nil {
		t.Errorf("Write that emits nothing: %v", err)
	}
}

func TestStatsString(t *testing.T) {
	s := Stats{Clipboard: 2, Title: 1, Unterminated: 1}
	want := "2 clipboard access (OSC 52), 1 window title (OSC 0/1/2), 1 of them unterminated"
	if s.String() != want || s.Total() != 3 {
		t.Errorf("String() = %q, Total() = %d; want %q, 3", s.String(), s.Total(), want)
	}
	if (Stats{}).String() != "" {
		t.Error("empty stats name something")
	}
}

// What the filter emits is its own fixed point: filtered again, nothing
// changes and nothing is dropped. So no sequence the filter drops can be
// assembled from what it lets through, however the input is cut.
func FuzzFilterFixedPoint(f *testing.F) {
	for _, tt := range filterTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in), uint8(3))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint8) {
		var once bytes.Buffer
		w := New(&once)
		step := int(cut)%7 + 1
		for i := 0; i < len(in); i += step {
			_, _ = w.Write(in[i:min(i+step, len(in))])
		}
		// A newline ends what a byte may still hold back (a 0xc2 that might
		// have started a C1 control).
		once.WriteByte('\n')
		var twice bytes.Buffer
		w2 := New(&twice)
		_, _ = w2.Write(once.Bytes())
		if !bytes.Equal(once.Bytes(), twice.Bytes()) || w2.Stats() != (Stats{}) {
			t.Errorf("not a fixed point: %q -> %q -> %q (%+v)", in, once.Bytes(), twice.Bytes(), w2.Stats())
		}
		for _, bad := range []string{"\x1b]", "\x1bP", "\x1b_", "\x1b^", "\x1bX", "\x1bc", "\x1b[3J"} {
			if bytes.Contains(once.Bytes(), []byte(bad)) {
				t.Errorf("%q passed in %q", bad, once.Bytes())
			}
		}
	})
}

func abbrev(s string) string {
	if len(s) > 80 {
		return s[:40] + "…" + s[len(s)-20:]
	}
	return s
}

// BenchmarkFilter measures the filter on what a full-screen agent writes:
// text, colours and cursor movement.
func BenchmarkFilter(b *testing.B) {
	chunk := []byte(strings.Repeat("\x1b[38;5;245m│\x1b[0m some output text, “quoted” 😀\x1b[K\r\n\x1b[12;1H", 512))
	f := New(io.Discard)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		_, _ = f.Write(chunk)
	}
}
