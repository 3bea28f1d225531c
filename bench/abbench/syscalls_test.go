package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPairedRatios(t *testing.T) {
	got := pairedRatios([]time.Duration{10, 30, 20}, []time.Duration{10, 10, 40})
	if len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 0.5 {
		t.Errorf("ratios %v", got)
	}
	if m := medianFloat(got); m != 1 {
		t.Errorf("median %v, want 1", m)
	}
	if m := medianFloat([]float64{1, 3, 2, 4}); m != 2.5 {
		t.Errorf("even median %v, want 2.5", m)
	}
}

// The run's record on the evidence channel says whether the listener ran.
func TestSeccompLogged(t *testing.T) {
	dir := t.TempDir()
	for want, text := range map[bool]string{
		true:  `{"event":"denial","denial":{}}` + "\n" + `{"event":"record","record":{"denial_layers":[{"layer":"seccomp","logged":true},{"layer":"landlock","logged":false}]}}`,
		false: `{"event":"record","record":{"denial_layers":[{"layer":"seccomp","logged":false,"detail":"AGENTBOX_BENCH_NO_LISTENER=1"}]}}`,
	} {
		p := filepath.Join(dir, "ev.jsonl")
		if err := os.WriteFile(p, []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := seccompLogged(p); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", text, got, err, want)
		}
	}
	p := filepath.Join(dir, "none.jsonl")
	_ = os.WriteFile(p, []byte(`{"event":"failed"}`+"\n"), 0o644)
	if _, err := seccompLogged(p); err == nil {
		t.Error("an evidence file without a record: no error")
	}
}
