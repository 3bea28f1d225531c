package launcher

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// groupLaunch is a launch whose AfterStep records the steps, for the step
// runner's own tests.
func groupLaunch(steps *[]string) *launch {
	return &launch{cfg: Config{Getenv: func(string) string { return "" }, AfterStep: func(s string) { *steps = append(*steps, s) }}, out: &lockedWriter{w: &strings.Builder{}}}
}

// A group's error is the first failure in the recipe's order, whichever
// lane failed first in time; each lane runs up to its own first failure,
// and the step after the group never runs.
func TestGroupFailsInTheRecipesOrder(t *testing.T) {
	var steps []string
	l := groupLaunch(&steps)
	var ranD, ranAfter bool
	slowFail := errors.New("b failed")
	recipe := []namedStep{
		sideBySide("g",
			[]namedStep{
				{name: "a", run: func() error { return nil }},
				{name: "b", run: func() error { time.Sleep(50 * time.Millisecond); return slowFail }},
			},
			[]namedStep{
				{name: "c", run: func() error { return errors.New("c failed") }},
				{name: "d", run: func() error { ranD = true; return nil }},
			},
		),
		{name: "after", run: func() error { ranAfter = true; return nil }},
	}
	err := l.runSteps(t.Context(), recipe)
	var e *Error
	if !errors.As(err, &e) || e.Step != "b" || !errors.Is(err, slowFail) {
		t.Fatalf("error %v, want b's, the first in the recipe's order", err)
	}
	if ranD || ranAfter {
		t.Errorf("d ran %v, after ran %v: want neither (c failed before d; the group failed)", ranD, ranAfter)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, steps); diff != "" {
		t.Errorf("AfterStep (-want +got):\n%s", diff)
	}
}

// The step after a group waits for every lane: what a slow lane wrote is
// there (the race detector checks that it was written before), and a
// refusal that comes last still stops the recipe before the next step, as
// the self-audit's refusal stops it before the create.
func TestGroupWaitsForEveryLane(t *testing.T) {
	var steps []string
	l := groupLaunch(&steps)
	var slow string
	var created bool
	recipe := []namedStep{
		sideBySide("g",
			[]namedStep{{name: "audit", run: func() error {
				time.Sleep(50 * time.Millisecond)
				slow = "judged"
				return refusef("the spec has a finding")
			}}},
			[]namedStep{{name: "denial log", run: func() error { return nil }}},
		),
		{name: "create", run: func() error { created = true; return nil }},
	}
	err := l.runSteps(t.Context(), recipe)
	var e *Error
	if !errors.As(err, &e) || e.Step != "audit" || e.Kind != KindRefused {
		t.Fatalf("error %v, want the audit's refusal", err)
	}
	if slow != "judged" || created {
		t.Errorf("slow lane wrote %q, create ran %v: want the audit's verdict and no create", slow, created)
	}
	if diff := cmp.Diff([]string{"audit", "denial log"}, steps); diff != "" {
		t.Errorf("AfterStep (-want +got):\n%s", diff)
	}

	steps, slow = nil, ""
	recipe[0].lanes[0][0].run = func() error { time.Sleep(50 * time.Millisecond); slow = "judged"; return nil }
	if err := l.runSteps(t.Context(), recipe); err != nil || slow != "judged" || !created {
		t.Errorf("error %v, slow lane wrote %q, create ran %v: want the create after both lanes", err, slow, created)
	}
}

// A lane that finds the launch interrupted before a step refuses at that
// step, as runSteps does, and the recipe stops there.
func TestGroupInterrupted(t *testing.T) {
	var steps []string
	l := groupLaunch(&steps)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var ranB bool
	recipe := []namedStep{sideBySide("g",
		[]namedStep{{name: "a", run: func() error { cancel(); return nil }}, {name: "b", run: func() error { ranB = true; return nil }}},
		[]namedStep{{name: "c", run: func() error { return nil }}},
	)}
	err := l.runSteps(ctx, recipe)
	var e *Error
	if !errors.As(err, &e) || e.Step != "b" || e.Kind != KindRefused || !strings.Contains(err.Error(), "interrupted") || ranB {
		t.Fatalf("error %v (b ran %v), want an interruption at b", err, ranB)
	}
}
