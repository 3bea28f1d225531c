package main

import (
	"strings"
	"testing"
	"time"
)

func TestPairReport(t *testing.T) {
	p := func(total, create time.Duration, part bool) pair {
		x := pair{agentbox: total, steps: []step{{"create", create}}}
		if part {
			x.parts = []step{{"teardown/delete", time.Millisecond}}
		}
		return x
	}
	runs := [2][]pair{
		{p(100*time.Millisecond, 50*time.Millisecond, true), p(200*time.Millisecond, 60*time.Millisecond, true), p(100*time.Millisecond, 70*time.Millisecond, true)},
		{p(90*time.Millisecond, 40*time.Millisecond, false), p(100*time.Millisecond, 40*time.Millisecond, false), p(80*time.Millisecond, 40*time.Millisecond, false)},
	}
	got := pairReport("runc", [2]string{"a", "b"}, runs, "0.10 0.20 0.30")
	// pairs' ratios 0.9, 0.5, 0.8: the median is 0.8, not 90/100
	for _, want := range []string{"paired ratio after/before 0.800 (IQR 0.500–0.800)", "wall: before 100.00 ms, after 90.00 ms", "load average at the end: 0.10 0.20 0.30"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	lines := strings.Split(got, "\n")
	var create, del string
	for _, l := range lines {
		if strings.Contains(l, "create") {
			create = l
		}
		if strings.Contains(l, "teardown/delete") {
			del = l
		}
	}
	if !strings.Contains(create, "60.00 ms") || !strings.Contains(create, "40.00 ms") {
		t.Errorf("create line %q", create)
	}
	if !strings.Contains(del, "1.00 ms") || !strings.HasSuffix(strings.TrimSpace(del), "-") {
		t.Errorf("a part only before has: %q", del)
	}
}
