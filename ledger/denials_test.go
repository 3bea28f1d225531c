package ledger

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDenialCount(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"no denial log", Record{}, "-"},
		{"no layer logged", Record{DenialLayers: []DenialLayer{{Layer: LayerSeccomp, Detail: "runtime cannot"}}}, "-"},
		{"logged, nothing tried", Record{DenialLayers: []DenialLayer{{Layer: LayerSeccomp, Logged: true, Probes: 7}}}, "0"},
		{"with the dropped ones", Record{Denials: make([]Denial, 3), DenialLayers: []DenialLayer{{Layer: LayerSeccomp, Logged: true, Dropped: 4}}}, "7"},
	}
	for _, tt := range tests {
		if got := tt.r.DenialCount(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDenialJSONShape(t *testing.T) {
	d := Denial{Time: t0, Layer: LayerSeccomp, Syscall: "mount", PID: 7, Comm: "sh", Args: "fstype=tmpfs target=/tmp"}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2025-11-29T07:44:12.123Z","layer":"seccomp","syscall":"mount","pid":7,"comm":"sh","args":"fstype=tmpfs target=/tmp"}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	var back Denial
	if err := json.Unmarshal(data, &back); err != nil || !back.Time.Equal(d.Time) || back.Syscall != "mount" {
		t.Errorf("round trip: %+v %v", back, err)
	}
}

// TestEvidenceDenialLines: denials arrive from another goroutine than the
// probes and the record; every line stays whole.
func TestEvidenceDenialLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evidence.jsonl")
	e, err := OpenEvidence(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Denial(Denial{Time: t0.Add(time.Duration(i)), Layer: LayerSeccomp, Syscall: "mount", Args: strings.Repeat("a", 300)})
		}()
	}
	wg.Wait()
	e.Record(Record{RunID: "r1", Kind: KindRun})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 51 {
		t.Fatalf("%d lines, want 51", len(lines))
	}
	for _, l := range lines[:50] {
		var ev struct {
			Event  string
			Denial Denial
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Event != "denial" || ev.Denial.Syscall != "mount" {
			t.Errorf("line %q: %+v %v", l, ev, err)
		}
	}
	if diff := cmp.Diff(`{"event":"record"`, lines[50][:17]); diff != "" {
		t.Errorf("last line: %s", diff)
	}
}
