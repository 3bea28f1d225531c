package launcher

import (
	"errors"
	"testing"
)

// An exit code the Wait stage returned early is the report's once the
// runtime agreed, and a disagreement found after teardown ends the run as
// a Wait stage error would have: the step named, its exit code, the
// message kept.
func TestSettleAfterAnEarlyWait(t *testing.T) {
	early := ran{exit: 7}
	if r := settle(early, nil); r.exit != 7 || r.err != nil {
		t.Errorf("settle with nothing pending = %d, %v; want the Wait stage's 7", r.exit, r.err)
	}
	if r := settle(early, &settled{code: 7}); r.exit != 7 || r.err != nil {
		t.Errorf("settle of an agreeing runtime = %d, %v; want 7", r.exit, r.err)
	}
	disagree := errors.New("the sandbox's first process reported exit status 7, but its runtime exited with 1")
	r := settle(early, &settled{code: 1, err: disagree})
	var se *Error
	if !errors.As(r.err, &se) || se.Step != "wait" || !errors.Is(r.err, disagree) {
		t.Fatalf("settle of a disagreeing runtime: error %v, want the wait step's, wrapping the disagreement", r.err)
	}
	if want := ExitCode(StepError("wait", disagree)); r.exit != want || r.exit == 7 || r.exit == 0 {
		t.Errorf("settle of a disagreeing runtime: exit %d, want %d (a Wait stage error's)", r.exit, want)
	}
}
