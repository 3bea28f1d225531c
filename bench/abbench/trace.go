package main

import (
	"bufio"
	"strconv"
	"strings"
	"time"
)

// tracePrefix starts each line that AGENTBOX_TRACE=1 makes agentbox print
// on stderr: "agentbox: trace: NAME   12.34ms".
const tracePrefix = "agentbox: trace: "

// step is one traced step of a launch and its wall time.
type step struct {
	name string
	d    time.Duration
}

// parseTrace returns the traced steps of one launch in the order printed.
// Lines that are not trace lines are ignored; a step printed twice is
// kept twice.
func parseTrace(stderr string) []step {
	var out []step
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), tracePrefix)
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		if i < 0 {
			continue
		}
		v, ok := strings.CutSuffix(rest[i+1:], "ms")
		f, err := strconv.ParseFloat(v, 64)
		name := strings.TrimSpace(rest[:i])
		if !ok || err != nil || name == "" {
			continue
		}
		out = append(out, step{name, time.Duration(f * float64(time.Millisecond))})
	}
	return out
}

// selfTestSteps are the steps that exist only for the self-test: planting
// the canaries and running the probes with the host's verification.
// Removing the canaries is part of teardown and stays in it (well under a
// millisecond). Everything else (init channel, configure init, hand over)
// an agentbox without the self-test would still need, since its init also
// reaps, forwards signals and applies Landlock.
var selfTestSteps = map[string]bool{"env canary": true, "canaries": true, "self-test": true}

// stepTimes sums the time of the steps named in want.
func stepTimes(steps []step, want map[string]bool) time.Duration {
	var d time.Duration
	for _, s := range steps {
		if want[s.name] {
			d += s.d
		}
	}
	return d
}

// stepTotal is the sum of all traced steps.
func stepTotal(steps []step) time.Duration {
	var d time.Duration
	for _, s := range steps {
		d += s.d
	}
	return d
}
