package ledger

import (
	"bytes"
	"errors"
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
	if err := WriteRecord(&b, Record{RunID: "r1", Kind: KindGC, Start: t0, Teardown: &Teardown{Cleanup: "clean"}}); err != nil {
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
