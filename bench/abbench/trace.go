package main

import (
	"bufio"
	"fmt"
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
// kept twice. The parts of a step ("teardown/delete", see parseParts) are
// not steps: they add up to part of their step's time.
func parseTrace(stderr string) []step {
	steps, _ := parseLines(stderr)
	return steps
}

// parseParts returns the traced parts of steps, "STEP/PART" (and
// "finish/PART" for what comes after the last step), in the order printed.
func parseParts(stderr string) []step {
	_, parts := parseLines(stderr)
	return parts
}

func parseLines(stderr string) (steps, parts []step) {
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), tracePrefix)
		if !ok {
			continue
		}
		if at := strings.LastIndex(rest, " @"); at >= 0 {
			rest = rest[:at] // AGENTBOX_TRACE_CLOCK=1's stamp (timeline.go)
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
		s := step{name, time.Duration(f * float64(time.Millisecond))}
		if strings.Contains(name, "/") {
			parts = append(parts, s)
		} else {
			steps = append(steps, s)
		}
	}
	return steps, parts
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

// labelled returns the steps keyed by name, a repeated name getting its
// occurrence ("agent", then "agent #2": the adapter step early in the
// plan and the wait for the agent share the name), in order.
func labelled(steps []step) []step {
	seen := map[string]int{}
	out := make([]step, len(steps))
	for i, s := range steps {
		seen[s.name]++
		out[i] = s
		if k := seen[s.name]; k > 1 {
			out[i].name = fmt.Sprintf("%s #%d", s.name, k)
		}
	}
	return out
}

// Phases of a launch, in the words of the README.
const (
	phasePlan     = "plan"
	phaseBundle   = "bundle"
	phaseCreate   = "runtime create"
	phaseSelfTest = "self-test"
	phaseStart    = "runtime start"
	phaseAgent    = "agent"
	phaseTeardown = "teardown"
	phaseOther    = "other"
)

// phases is the order the report prints them in.
var phases = []string{phasePlan, phaseBundle, phaseCreate, phaseSelfTest, phaseStart, phaseAgent, phaseTeardown, phaseOther}

var phaseOf = map[string]string{
	"bundle": phaseBundle, "lsm": phaseBundle, "workspace grant": phaseBundle, "init channel": phaseBundle,
	"create": phaseCreate, "configure init": phaseCreate,
	"start":     phaseStart,
	"hand over": phaseAgent,
	"teardown":  phaseTeardown,
}

// phase sorts each step into a phase. The self-test's own steps are
// self-test wherever they are; a step named in phaseOf goes there; any
// other step before the runtime's create is planning (policy, host, the
// gateway's start, ids, the agent adapter, render, audit, and steps added
// later), and the agent's run is the step after "hand over".
func phase(steps []step) []string {
	out := make([]string, len(steps))
	created, handedOver := false, false
	for i, s := range steps {
		p, known := phaseOf[s.name]
		switch {
		case selfTestSteps[s.name]:
			p = phaseSelfTest
		case known:
		case !created:
			p = phasePlan
		case handedOver && s.name == "agent":
			p = phaseAgent
		default:
			p = phaseOther
		}
		created = created || s.name == "create"
		handedOver = handedOver || s.name == "hand over"
		out[i] = p
	}
	return out
}
