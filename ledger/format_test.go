package ledger

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWriteTable(t *testing.T) {
	audit := Record{
		RunID: "20251129T080000.000Z-00000002", Kind: KindAudit, Start: t0.Add(16 * time.Minute),
		Command: []string{"audit", "compose.yaml"}, ExitCode: 1, Findings: []Finding{{Code: "host-network-mode"}},
	}
	long := Record{
		RunID: "20251129T090000.000Z-00000003", Kind: KindRun, Start: t0.Add(time.Hour),
		Command: []string{"sh", "-c", "echo 'a very long command line that will not fit' && $HOME"}, ExitCode: 130,
	}
	gc := Record{RunID: "20251129T100000.000Z-00000004", Kind: KindGC, Start: t0.Add(2 * time.Hour)}
	var b bytes.Buffer
	if err := WriteTable(&b, []Record{fullRecord(), audit, long, gc}); err != nil {
		t.Fatal(err)
	}
	golden(t, "runs.txt", b.Bytes())
}

func TestWriteRecord(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRecord(&b, fullRecord()); err != nil {
		t.Fatal(err)
	}
	golden(t, "show.txt", b.Bytes())

	b.Reset()
	if err := WriteRecord(&b, Record{RunID: "r1", Kind: KindGC, Start: t0, Teardown: &Teardown{Decision: DecisionClean}}); err != nil {
		t.Fatal(err)
	}
	golden(t, "show-minimal.txt", b.Bytes())
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteRecordReportsWriteError(t *testing.T) {
	if err := WriteRecord(failWriter{}, fullRecord()); err == nil {
		t.Error("WriteRecord to a failing writer returned nil")
	}
	if err := WriteTable(failWriter{}, []Record{fullRecord()}); err == nil {
		t.Error("WriteTable to a failing writer returned nil")
	}
}

func TestWriteRecordEscapesControlCharacters(t *testing.T) {
	r := Record{
		RunID: "r1", Kind: KindAudit, Start: t0, Notes: "line\x1b]0;owned\x07\nnext\ttab",
		Findings: []Finding{{Code: "x\x1b[2J", Severity: "high"}},
	}
	var b bytes.Buffer
	if err := WriteRecord(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "show-escaped.txt", b.Bytes())
	if bytes.ContainsAny(b.Bytes(), "\x1b\x07\t") {
		t.Errorf("control characters reached the output:\n%q", b.String())
	}
}

func TestQuoteArgs(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"codex", "--full-auto"}, "codex --full-auto"},
		{[]string{"claude", "-p", "fix it"}, `claude -p "fix it"`},
		{[]string{"x", ""}, `x ""`},
		{[]string{"echo", "$HOME"}, `echo "$HOME"`},
		{[]string{"printf", "a\x1b[2Jb"}, `printf "a\x1b[2Jb"`},
	}
	for _, tt := range tests {
		if got := quoteArgs(tt.argv); got != tt.want {
			t.Errorf("quoteArgs(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

// Every string the agent can choose reaches `agentbox show` escaped: a file
// name with newlines cannot add a "verdict: PASS" line, a carriage return
// cannot overwrite one, an escape sequence cannot rewrite the screen.
func TestWriteRecordEscapesAgentStrings(t *testing.T) {
	const forged = "\nverdict      ok\nverdict: PASS"
	r := Record{
		RunID: "r1", Kind: KindRun, Start: t0, ExitCode: 1,
		Command: []string{"sh", "-c", "touch 'evil" + forged + "'"},
		Agent:   "codex\x1b[2J", PermissionMode: "full\rverdict: PASS",
		Findings:         []Finding{{Code: "extra-writable-mount", Severity: "high", Subject: "/ws/evil" + forged, Detail: "d\r\x1b[1A", Fix: "f\n", Reason: "r\n"}},
		Residuals:        []Residual{{Code: "no-lsm-label", Detail: "x" + forged}},
		Probes:           []Probe{{Probe: "host-home-not-mounted", Expect: "DENY", Decision: "DENY", Target: "/home/\u202egnp.exe", Observed: "absent" + forged}},
		HostVerification: map[string]string{"canary\nverdict": "ok" + forged},
		Teardown: &Teardown{
			Decision: DecisionResidue, Errors: []string{"residue" + forged}, RemainingMounts: []string{"/run/x" + forged}, OpenSockets: []string{"@sock\x1b]52;c;eA==\a"},
			RuntimeStateLeft: []string{"id\r"},
		},
		Error: "grant: open /ws/evil" + forged + ": permission denied",
		Notes: "found /ws/evil" + forged,
	}
	var b bytes.Buffer
	if err := WriteRecord(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\r\x1b\a\u202e") {
		t.Errorf("a control or format character reached the output:\n%q", out)
	}
	verdicts := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "verdict") {
			verdicts++
		}
	}
	if verdicts != 1 {
		t.Errorf("%d lines start with verdict, want the record's own one:\n%s", verdicts, out)
	}
	for _, s := range []string{"/ws/evil" + forged, "absent" + forged, "residue" + forged, "/run/x" + forged, "found /ws/evil" + forged} {
		if !strings.Contains(out, strconv.Quote(s)) {
			t.Errorf("output lacks %s, escaped:\n%s", strconv.Quote(s), out)
		}
	}
	golden(t, "show-agent-strings.txt", b.Bytes())
}

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"/ws/ordinary file.go", "/ws/ordinary file.go"},
		{"naïve 世界", "naïve 世界"},
		{`a\nb`, `a\nb`},
		{"a\nb", `"a\nb"`},
		{"a\rb", `"a\rb"`},
		{"\x1b[2J", `"\x1b[2J"`},
		{"tab\there", `"tab\there"`},
		{"\u202eevil", `"\u202eevil"`},
		{`"quoted"`, `"\"quoted\""`},
		{"\xff", `"\xff"`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
