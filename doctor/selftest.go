package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/ledger"
)

// SelfTestResult is what the end-to-end proof returns: the throwaway
// sandbox's run id and every probe result.
type SelfTestResult struct {
	RunID  string
	Probes []ledger.Probe
}

// SelfTestFunc builds a throwaway sandbox, runs every self-test probe in it
// and tears it down. An error means the sandbox could not be built or torn
// down cleanly.
type SelfTestFunc func(ctx context.Context) (SelfTestResult, error)

// SelfTestFacts is the outcome of the end-to-end proof.
type SelfTestFacts struct {
	// Ran is false when no self-test was available; NotRun says why.
	Ran    bool           `json:"ran"`
	NotRun string         `json:"not_run,omitempty"`
	Err    string         `json:"err,omitempty"`
	Result SelfTestResult `json:"result"`
}

// runSelfTest runs fn, if there is one, into f.
func runSelfTest(ctx context.Context, fn SelfTestFunc, f *Facts) {
	if fn == nil {
		f.SelfTest.NotRun = "no self-test is wired into doctor in this build"
		return
	}
	f.SelfTest.Ran = true
	res, err := fn(ctx)
	f.SelfTest.Result = res
	if err != nil {
		f.SelfTest.Err = err.Error()
	}
}

func checkSelfTest(f *Facts) []Result {
	s := f.SelfTest
	r := Result{ID: "selftest", Layer: LayerSelfTest}
	var failed []string
	for _, p := range s.Result.Probes {
		if !p.Passed() {
			failed = append(failed, fmt.Sprintf("%s (expected %s, got %s)", p.Probe, p.Expect, p.Decision))
		}
	}
	n := len(s.Result.Probes)
	switch {
	case !s.Ran:
		r.Status, r.Detail, r.Fix = Unknown, "the end-to-end proof did not run ("+s.NotRun+"): host facts alone do not show the boundary holds", "agentbox selftest"
	case s.Err != "":
		r.Status, r.Detail, r.Fix = Fail, "the throwaway sandbox failed: "+s.Err, "fix the failures above, then: agentbox selftest"
	case len(failed) > 0:
		r.Status, r.Detail = Fail, fmt.Sprintf("%d of %d probes failed in sandbox %s: %s", len(failed), n, s.Result.RunID, strings.Join(failed, ", "))
		r.Fix = "agentbox show " + s.Result.RunID + " (each probe's evidence), then fix what it names"
	case n == 0:
		r.Status, r.Detail, r.Fix = Unknown, "the self-test returned no probe results", "agentbox selftest"
	default:
		r.Status, r.Detail = Pass, fmt.Sprintf("throwaway sandbox %s: all %d probes passed", s.Result.RunID, n)
	}
	return []Result{r}
}
