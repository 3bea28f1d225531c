package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func msD(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// pairsOf makes launches whose self-test steps take 10 ms of each.
func pairsOf(agentbox, baseline []float64) []pair {
	var out []pair
	for i := range agentbox {
		out = append(out, pair{
			agentbox: msD(agentbox[i]), baseline: msD(baseline[i]),
			steps: []step{{"create", msD(agentbox[i] / 2)}, {"canaries", msD(1)}, {"self-test", msD(9)}},
		})
	}
	return out
}

func TestLaunchRows(t *testing.T) {
	pairs := pairsOf([]float64{50, 60, 55}, []float64{40, 41, 42})
	for _, c := range []struct {
		name string
		b    launchBench
		want []row
	}{
		{"both ran", launchBench{runtime: "runc", label: "runc"}, []row{
			{Metric: "run -- true, with self-test (runc)", Agentbox: "55.00 ms", Baseline: "41.00 ms", Value: "1.34", Target: "≤ 1.25", Met: "no"},
			{Metric: "run -- true, without self-test (runc)", Agentbox: "45.00 ms", Baseline: "41.00 ms", Value: "1.10", Target: "≤ 1.25", Met: "yes"},
			{Metric: "probe suite in sandbox, self-test step (runc)", Agentbox: "9.00 ms", Value: "9.00 ms", Target: "< 100 ms", Met: "yes"},
		}},
		{"baseline failed", launchBench{runtime: "crun", label: "crun", baselineErr: "hybrid"}, []row{
			{Metric: "run -- true, with self-test (crun)", Agentbox: "55.00 ms", Baseline: "fails", Value: "n/a", Target: "≤ 1.25", Met: "-"},
			{Metric: "run -- true, without self-test (crun)", Agentbox: "45.00 ms", Baseline: "fails", Value: "n/a", Target: "≤ 1.25", Met: "-"},
			{Metric: "probe suite in sandbox, self-test step (crun)", Agentbox: "9.00 ms", Value: "9.00 ms", Target: "< 100 ms", Met: "yes"},
		}},
		{"agentbox failed", launchBench{runtime: "crun", label: "crun", agentboxErr: "create failed"}, []row{
			{Metric: "run -- true, with self-test (crun)", Agentbox: "fails", Baseline: "41.00 ms", Value: "n/a", Target: "≤ 1.25", Met: "-"},
			{Metric: "run -- true, without self-test (crun)", Agentbox: "fails", Baseline: "41.00 ms", Value: "n/a", Target: "≤ 1.25", Met: "-"},
		}},
	} {
		rep := c.b.report(pairs)
		if d := cmp.Diff(c.want, rep.rows); d != "" {
			t.Errorf("%s: rows (-want +got):\n%s", c.name, d)
		}
		for _, e := range []string{c.b.agentboxErr, c.b.baselineErr} {
			if e != "" && !strings.Contains(rep.text, "FAILS here: "+e) {
				t.Errorf("%s: the report does not say why a side failed:\n%s", c.name, rep.text)
			}
		}
	}
}

func TestLaunchReportNamesWhereTheTimeGoes(t *testing.T) {
	b := launchBench{runtime: "runc", label: "runc"}
	text := b.report(pairsOf([]float64{50, 60, 55}, []float64{40, 41, 42})).text
	for _, want := range []string{
		"ratio: 1.34 with the self-test, 1.10 without (target ≤ 1.25)",
		"runtime create     27.50 ms",
		"self-test          10.00 ms",
		"outside the steps  17.50 ms",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}
