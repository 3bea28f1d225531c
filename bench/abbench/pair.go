package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// runPair compares two builds of agentbox on the same launch, `agentbox
// run -- true`, alternating them launch by launch (the order flipping
// every pair) so that both see the same noise of a shared machine. Its
// figure is the median over the pairs of after / before, the paired
// ratio, which the load moves far less than either side's median; each
// step and part of a step is printed for both sides.
func runPair(args []string) error {
	fs := flag.NewFlagSet("pair", flag.ContinueOnError)
	before := fs.String("before", "", "the agentbox binary before the change (agentbox-init beside it)")
	after := fs.String("after", "", "the agentbox binary after the change (agentbox-init beside it)")
	runtime := fs.String("runtime", "runc", "OCI runtime: runc or crun")
	n := fs.Int("n", 30, "measured pairs")
	warmup := fs.Int("warmup", 2, "pairs run first and not measured")
	work := fs.String("work", "", "scratch directory (required)")
	owner := fs.String("owner", "1000:1000", "uid:gid that owns the benchmark workspace")
	address := fs.String("address", "", "containerd `SOCKET`: both sides run with --engine containerd on that daemon")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *before == "" || *after == "" || *work == "" || *n < 1 {
		return errors.New("pair: -before, -after and -work are required and -n must be at least 1")
	}
	own, err := parseOwner(*owner)
	if err != nil {
		return err
	}
	sides := make([]*launchBench, 2)
	for i, bin := range []string{*before, *after} {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return err
		}
		sides[i] = &launchBench{agentbox: abs, runtime: *runtime, work: *work, owner: own, timeout: 30 * time.Second, ws: filepath.Join(*work, "ws"), address: *address}
	}
	if err := os.MkdirAll(sides[0].ws, 0o755); err != nil {
		return err
	}
	if err := os.Chown(sides[0].ws, own[0], own[1]); err != nil {
		return err
	}
	var runs [2][]pair
	var failures [2][]string
	for i := 0; len(runs[0]) < *n; i++ {
		if len(failures[0])+len(failures[1]) > *n {
			break
		}
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		var got [2]pair
		ok := true
		for _, k := range order {
			p, err := sides[k].runAgentbox()
			if err != nil {
				// Reported, and the pair dropped: a shared machine's other
				// work can kill a launch, and the two sides must stay pairs.
				failures[k] = append(failures[k], fmt.Sprintf("pair %d: %v", i, err))
				ok = false
			}
			got[k] = p
		}
		if ok && i >= *warmup {
			runs[0], runs[1] = append(runs[0], got[0]), append(runs[1], got[1])
		}
	}
	label := *runtime
	if *address != "" {
		label += " --engine containerd --address " + *address
	}
	if len(runs[0]) > 0 {
		fmt.Print(pairReport(label, [2]string{*before, *after}, runs, loadAverage()))
	}
	for k, name := range []string{"before", "after"} {
		for _, f := range failures[k] {
			fmt.Printf("  %s FAILED, pair dropped: %s\n", name, strings.ReplaceAll(f, "\n", " | "))
		}
	}
	if len(runs[0]) < *n {
		return fmt.Errorf("pair: %d launches failed, more than the %d pairs asked for", len(failures[0])+len(failures[1]), *n)
	}
	return nil
}

// pairReport is the text of a paired comparison; flags are the run's
// (the runtime, and the engine when it is containerd).
func pairReport(flags string, bins [2]string, runs [2][]pair, load string) string {
	var w strings.Builder
	fmt.Fprintf(&w, "agentbox run --runtime %s -- true, %d pairs alternating launch by launch; load average at the end: %s\n", flags, len(runs[0]), load)
	fmt.Fprintf(&w, "  before: %s\n  after:  %s\n", bins[0], bins[1])
	for _, m := range []struct {
		name string
		of   func(pair) time.Duration
	}{
		{"whole launch, wall", func(p pair) time.Duration { return p.agentbox }},
		{"CPU of agentbox and what it waited for", func(p pair) time.Duration { return p.cpu }},
	} {
		var ratios []float64
		var total [2]sample
		for i := range runs[0] {
			ratios = append(ratios, float64(m.of(runs[1][i]))/float64(max(m.of(runs[0][i]), 1)))
			total[0] = append(total[0], m.of(runs[0][i]))
			total[1] = append(total[1], m.of(runs[1][i]))
		}
		q := func(p float64) float64 {
			c := slices.Clone(ratios)
			slices.Sort(c)
			return c[min(max(int(p*float64(len(c))+0.5)-1, 0), len(c)-1)]
		}
		fmt.Fprintf(&w, "  %s: before %s, after %s (medians); paired ratio after/before %.3f (IQR %.3f–%.3f)\n",
			m.name, ms(total[0].median()), ms(total[1].median()), medianFloat(ratios), q(0.25), q(0.75))
	}
	tw := tabwriter.NewWriter(&w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  step or part\tbefore\tafter\t\n")
	for _, name := range stepNames(runs) {
		med := func(k int) string {
			var s sample
			found := false
			for _, p := range runs[k] {
				d, ok := namedTime(p, name)
				found = found || ok
				s = append(s, d)
			}
			if !found {
				return "-"
			}
			return ms(s.median())
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", name, med(0), med(1))
	}
	tw.Flush()
	return w.String()
}

// stepNames are the labelled steps and parts of both sides, in the order
// the after side printed them, then those only the before side had.
func stepNames(runs [2][]pair) []string {
	var names []string
	for _, k := range []int{1, 0} {
		if len(runs[k]) == 0 {
			continue
		}
		for _, s := range append(labelled(runs[k][0].steps), labelled(runs[k][0].parts)...) {
			if !slices.Contains(names, s.name) {
				names = append(names, s.name)
			}
		}
	}
	return names
}

// namedTime is the time of the step or part labelled name in one launch.
func namedTime(p pair, name string) (time.Duration, bool) {
	for _, s := range append(labelled(p.steps), labelled(p.parts)...) {
		if s.name == name {
			return s.d, true
		}
	}
	return 0, false
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
