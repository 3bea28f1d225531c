package main

import (
	"fmt"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"
)

// launchReport is the text of one A/B section and its summary rows.
type launchReport struct {
	text string
	rows []row
}

func (b *launchBench) report(pairs []pair) launchReport {
	var full, noST, base, st sample
	for _, p := range pairs {
		full = append(full, p.agentbox)
		noST = append(noST, p.agentbox-stepTimes(p.steps, selfTestSteps))
		base = append(base, p.baseline)
		st = append(st, stepTimes(p.steps, map[string]bool{"self-test": true}))
	}
	var w strings.Builder
	fmt.Fprintf(&w, "agentbox run --runtime %s -- true  vs  %s on the baseline bundle [%s]\n", b.runtime, b.baselineName(), b.label)
	fmt.Fprintf(&w, "%s; %d interleaved pairs after %d warm-up pairs\n", version(b.rtPath), len(pairs), b.warmup)
	fmt.Fprintf(&w, "baseline: the config.json of `agentbox spec -- /usr/bin/true` for the same workspace, except:\n")
	for _, c := range b.changes {
		fmt.Fprintf(&w, "  - %s\n", c)
	}
	if b.agentboxErr != "" {
		fmt.Fprintf(&w, "agentbox with %s FAILS here: %s\n", b.runtime, b.agentboxErr)
	}
	if b.baselineErr != "" {
		fmt.Fprintf(&w, "%s on the baseline bundle FAILS here: %s\n", b.baselineName(), b.baselineErr)
	}
	if len(pairs) > 0 {
		b.writeMedians(&w, full, noST, base)
	}
	if b.agentboxErr == "" && len(pairs) > 0 {
		b.writeSteps(&w, pairs)
	}
	return launchReport{text: w.String(), rows: b.summaryRows(full, noST, base, st)}
}

func (b *launchBench) writeMedians(w *strings.Builder, full, noST, base sample) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tmedian\tIQR\t\n")
	if b.agentboxErr == "" {
		fmt.Fprintf(tw, "  agentbox run -- true (with the self-test)\t%s\t%s\t\n", ms(full.median()), ms(full.spread()))
		fmt.Fprintf(tw, "  the same minus the self-test steps\t%s\t%s\t\n", ms(noST.median()), ms(noST.spread()))
	}
	if b.baselineErr == "" {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", b.baselineName(), ms(base.median()), ms(base.spread()))
	}
	tw.Flush()
	if b.agentboxErr == "" && b.baselineErr == "" {
		fmt.Fprintf(w, "  ratio: %s with the self-test, %s without (target ≤ %.2f)\n", ratio(full.median(), base.median()), ratio(noST.median(), base.median()), b.goal())
	}
}

// writeSteps prints where agentbox's time goes: the median of each phase
// over all launches, then of each step. Medians do not add up exactly to
// the median wall time; "outside the steps" is what no step covers:
// process start-up, flag parsing, the ledger append and exit.
func (b *launchBench) writeSteps(w *strings.Builder, pairs []pair) {
	fmt.Fprintf(w, "where agentbox's time goes (AGENTBOX_TRACE=1, median over %d launches):\n", len(pairs))
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	members := map[string][]string{}
	for i, p := range phase(pairs[0].steps) {
		members[p] = append(members[p], labelled(pairs[0].steps)[i].name)
	}
	for _, ph := range phases {
		if len(members[ph]) == 0 {
			continue
		}
		d := medianOf(pairs, func(p pair) time.Duration { return phaseTime(p.steps, ph) })
		fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", ph, ms(d), strings.Join(members[ph], ", "))
	}
	fmt.Fprintf(tw, "  outside the steps\t%s\t(process start-up and exit, ids release, record and ledger append)\n", ms(medianOf(pairs, func(p pair) time.Duration { return p.agentbox - stepTotal(p.steps) })))
	tw.Flush()
	fmt.Fprintf(w, "  calibration, same loop: process start-up and exit alone of agentbox (`agentbox help`) %s and of agentbox-init (`agentbox-init --list`) %s; one runtime call that does nothing (`%s state` of no container) %s\n",
		ms(medianOf(pairs, func(p pair) time.Duration { return p.abStart })), ms(medianOf(pairs, func(p pair) time.Duration { return p.initStart })),
		b.runtime, ms(medianOf(pairs, func(p pair) time.Duration { return p.rtCall })))
	fmt.Fprintf(w, "  every step:")
	for i, s := range labelled(pairs[0].steps) {
		if i%6 == 0 {
			fmt.Fprintf(w, "\n   ")
		}
		fmt.Fprintf(w, " %s %s;", s.name, ms(medianOf(pairs, func(p pair) time.Duration { return labelTime(p.steps, s.name) })))
	}
	fmt.Fprintln(w)
	if len(pairs[0].parts) == 0 {
		return
	}
	fmt.Fprintf(w, "  parts of steps (each within its step's time above; finish/ is after the last step):")
	for i, s := range labelled(pairs[0].parts) {
		if i%5 == 0 {
			fmt.Fprintf(w, "\n   ")
		}
		fmt.Fprintf(w, " %s %s;", s.name, ms(medianOf(pairs, func(p pair) time.Duration { return labelTime(p.parts, s.name) })))
	}
	fmt.Fprintln(w)
}

// phaseTime is the time of one launch's steps in phase ph.
func phaseTime(steps []step, ph string) time.Duration {
	var d time.Duration
	for i, p := range phase(steps) {
		if p == ph {
			d += steps[i].d
		}
	}
	return d
}

// labelTime is the time of the step labelled label (see labelled).
func labelTime(steps []step, label string) time.Duration {
	for _, s := range labelled(steps) {
		if s.name == label {
			return s.d
		}
	}
	return 0
}

func medianOf(pairs []pair, f func(pair) time.Duration) time.Duration {
	s := make(sample, len(pairs))
	for i, p := range pairs {
		s[i] = f(p)
	}
	return s.median()
}

// summaryRows are the summary lines of this comparison.
func (b *launchBench) summaryRows(full, noST, base, st sample) []row {
	rt := " (" + b.label + ")"
	ab := func(s sample) string {
		if b.agentboxErr != "" {
			return "fails"
		}
		return ms(s.median())
	}
	bl := ms(base.median())
	if b.baselineErr != "" {
		bl = "fails"
	}
	r := func(metric string, s sample) row {
		x := row{Metric: metric + rt, Agentbox: ab(s), Baseline: bl, Value: "n/a", Target: fmt.Sprintf("≤ %.2f", b.goal()), Met: "-"}
		if b.agentboxErr == "" && b.baselineErr == "" {
			x.Value = ratio(s.median(), base.median())
			x.Met = met(float64(s.median()) <= b.goal()*float64(base.median()))
		}
		return x
	}
	rows := []row{r("run -- true, with self-test", full), r("run -- true, without self-test", noST)}
	if b.agentboxErr == "" {
		rows = append(rows, row{Metric: "probe suite in sandbox, self-test step" + rt, Agentbox: ms(st.median()), Value: ms(st.median()), Target: "< 100 ms", Met: met(st.median() < 100*time.Millisecond)})
	}
	return rows
}

// version is the first line of RUNTIME --version.
func version(path string) string {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return path + " (version unknown)"
	}
	return lastLine(strings.SplitN(string(out), "\n", 2)[0])
}
