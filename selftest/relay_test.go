package selftest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestWriteThenReadResults(t *testing.T) {
	cfg := &InitConfig{Version: ProtocolVersion, RunID: "r1", Probes: []string{"environment-is-clean"}}
	var out bytes.Buffer
	if _, err := WriteResults(context.Background(), &out, &Env{Config: cfg, Proc: "/proc", Environ: []string{"HOME=/h"}}); err != nil {
		t.Fatal(err)
	}
	// A line that is no result, and the same probe twice: relayed once.
	text := "not json\n" + out.String() + out.String()
	seen := map[string]bool{}
	var got []Result
	if err := ReadResults(strings.NewReader(text), seen, func(r Result) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Probe != "environment-is-clean" || got[0].RunID != "r1" || !seen["environment-is-clean"] {
		t.Errorf("relayed %+v, seen %v; want the one result once", got, seen)
	}
	p, _ := Lookup("gateway-reachable")
	r := NoResult(p, "r1", errors.New("killed"))
	if r.Decision != Unknown || r.Passed() || !strings.Contains(r.Detail, "killed") || r.Evidence == "" {
		t.Errorf("NoResult = %+v", r)
	}
}
