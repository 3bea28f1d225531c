package ledger

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Agent-written paths and values cannot add lines to `agentbox show`.
func TestWriteRecordWorkspaceIsQuoted(t *testing.T) {
	r := Record{RunID: "20261201T000000.000Z-00000000", Kind: KindRun, Start: time.Unix(0, 0), Workspace: &Workspace{
		Sockets:   []string{"run/nvim.sock"},
		Leftovers: []Leftover{{Path: "a\nverdict: PASS\x1b[2J", Kind: "git-config", Change: "created", Key: "core.fsmonitor", Value: "x\ny"}},
	}}
	var b bytes.Buffer
	if err := WriteRecord(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`socket at launch (covered)  "run/nvim.sock"`, `LEFT created  "a\nverdict: PASS\x1b[2J"  git-config core.fsmonitor = "x\ny"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\nverdict: PASS") || strings.Contains(out, "\x1b") {
		t.Errorf("agent text reached the output raw:\n%s", out)
	}
}
