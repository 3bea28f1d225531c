package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseTrace(t *testing.T) {
	in := `agentbox: trace: policy               0.05ms
agentbox: trace: env canary           0.03ms
some other line
agentbox: trace: create              41.83ms
agentbox: trace: broken               x.yms
agentbox: trace:                      1.00ms
agentbox: trace: self-test            9.50ms
agentbox: trace: self-test            1.00ms
agentbox: trace: teardown/delete      7.25ms
agentbox run: create: crun create: unknown version specified
`
	got := parseTrace(in)
	want := []step{
		{"policy", 50 * time.Microsecond},
		{"env canary", 30 * time.Microsecond},
		{"create", 41830 * time.Microsecond},
		{"self-test", 9500 * time.Microsecond},
		{"self-test", 1 * time.Millisecond},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(step{}), cmp.Comparer(near)); d != "" {
		t.Fatalf("parseTrace (-want +got):\n%s", d)
	}
	if d := stepTimes(got, selfTestSteps); !near(d, 10530*time.Microsecond) {
		t.Errorf("stepTimes = %v", d)
	}
	if d := stepTotal(got); !near(d, 52410*time.Microsecond) {
		t.Errorf("stepTotal = %v", d)
	}
	parts := parseParts(in)
	if len(parts) != 1 || parts[0].name != "teardown/delete" || !near(parts[0].d, 7250*time.Microsecond) {
		t.Errorf("parseParts = %v", parts)
	}
}

// near compares durations parsed from two-decimal milliseconds, which
// float rounding may leave a nanosecond off.
func near(a, b time.Duration) bool { return (a - b).Abs() <= time.Microsecond }

func TestPhase(t *testing.T) {
	names := []string{
		"policy", "env canary", "host", "gc", "run directory", "gateway", "ids", "plan", "agent", "render", "audit",
		"bundle", "lsm", "workspace grant", "canaries", "init channel", "create", "configure init", "start",
		"self-test", "hand over", "agent", "teardown", "something new",
	}
	steps := make([]step, len(names))
	for i, n := range names {
		steps[i] = step{name: n}
	}
	want := []string{
		"plan", "self-test", "plan", "plan", "plan", "plan", "plan", "plan", "plan", "plan", "plan",
		"bundle", "bundle", "bundle", "self-test", "bundle", "runtime create", "runtime create", "runtime start",
		"self-test", "agent", "agent", "teardown", "other",
	}
	if d := cmp.Diff(want, phase(steps)); d != "" {
		t.Errorf("phase (-want +got):\n%s", d)
	}
	var got []string
	for _, s := range labelled(steps) {
		got = append(got, s.name)
	}
	if got[8] != "agent" || got[21] != "agent #2" || got[0] != "policy" {
		t.Errorf("labelled: %q", got)
	}
}
