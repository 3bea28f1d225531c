package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// prepareSteps are the steps of the Prepare stage, in order.
var prepareSteps = []string{
	"policy", "host", "workspace", "inputs", "plan", "evidence",
	"gc", "run directory", "ids", "render", "runtime", "audit", "denial log", "canaries", "gateway", "init binary", "bundle", "lsm",
	"workspace grant", "workspace canary", "init channel", "create", "configure init",
}

// passing are probe results of a sandbox that holds.
var passing = []selftest.Result{
	{Probe: "capabilities-zero", Expect: selftest.Deny, Decision: selftest.Deny, Observed: "none"},
	{Probe: "gateway-reachable", Expect: selftest.Allow, Decision: selftest.Allow, Observed: "connected"},
}

// fakeRun is one launch on the fake engine, with directories, a workspace
// and a home of its own, and the steps it went through.
type fakeRun struct {
	cfg    Config
	eng    *fakeEngine
	ws     string
	home   string
	stdout *os.File
	steps  []string
	// cancelAfter, when set, cancels the launch's context after that step.
	cancelAfter string
	cancel      context.CancelFunc
}

func newFakeRun(t *testing.T, init fakeInit) *fakeRun {
	t.Helper()
	r := &fakeRun{eng: newFakeEngine(t, init), ws: shortDir(t, "ablw-"), home: shortDir(t, "ablh-")}
	t.Setenv("HOME", r.home) // the home canary goes here
	var err error
	if r.stdout, err = os.CreateTemp(t.TempDir(), "stdout"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stdout.Close() })
	r.cfg = Config{
		Argv:    []string{"true"},
		Policy:  policy.Policy{Workspace: r.ws, Runtime: "/bin/true"}, // the fake engine runs no runtime
		Sources: policy.Sources{Workspace: r.ws, EUID: uint32(os.Geteuid())},
		Stdout:  r.stdout, Stderr: &strings.Builder{}, Getenv: func(string) string { return "" },
		Dirs:     Dirs{State: shortDir(t, "abls-"), RunRoot: shortDir(t, "ablr-")},
		InitPath: "/bin/true",
		Engine:   r.eng.open,
		AfterStep: func(step string) {
			r.steps = append(r.steps, step)
			if step == r.cancelAfter {
				r.cancel()
			}
		},
	}
	return r
}

func (r *fakeRun) run(t *testing.T) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r.cancel = cancel
	return Run(ctx, r.cfg)
}

// records are the ledger's records.
func (r *fakeRun) records(t *testing.T) []ledger.Record {
	t.Helper()
	recs, _, err := r.cfg.Dirs.Ledger().List()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return recs
}

// assertNothingLeft checks that the run root holds no run directory and no
// id lease, and that no canary is left in the home or the workspace.
func (r *fakeRun) assertNothingLeft(t *testing.T) {
	t.Helper()
	for _, pattern := range []string{
		filepath.Join(r.cfg.Dirs.RunRoot, "runs", "*"), filepath.Join(r.cfg.Dirs.RunRoot, "userns", "*.lease"),
		filepath.Join(r.home, ".agentbox-canary-*"), filepath.Join(r.ws, ".agentbox-canary-*"),
	} {
		if left, _ := filepath.Glob(pattern); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}
}

// shortDir is a private directory with a short path: unix socket paths
// live below the run root.
func shortDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// A run goes through every stage in order, hands over to the agent, passes
// its exit code through, tears down once and records the run.
func TestRunOnTheFakeEngine(t *testing.T) {
	r := newFakeRun(t, fakeInit{Probes: passing, Stdout: "agent output\n", Exit: 7})
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, r.cfg.Stderr)
	}
	if res.ExitCode != 7 {
		t.Errorf("exit %d, want the agent's 7", res.ExitCode)
	}
	if diff := cmp.Diff(append(slices.Clone(prepareSteps), "start", "self-test", "hand over"), r.steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"write bundle", "create", "start", "teardown"}, r.eng.called()); diff != "" {
		t.Errorf("engine calls (-want +got):\n%s", diff)
	}
	if out, _ := os.ReadFile(r.stdout.Name()); string(out) != "agent output\n" {
		t.Errorf("the user's stdout got %q, want the agent's output", out)
	}
	recs := r.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d ledger records, want 1", len(recs))
	}
	rec := recs[0]
	if rec.RunID != res.Record.RunID || rec.Kind != ledger.KindRun || rec.ExitCode != 7 || rec.Error != "" ||
		rec.Teardown == nil || !rec.Teardown.Clean() || !slices.Equal(rec.Command, []string{"true"}) {
		t.Errorf("record %+v", rec)
	}
	if len(rec.Probes) != len(passing)+7 || len(res.Failed) != 0 {
		t.Errorf("record has %d probes (want %d: the sandbox's and the host's 7), %d failed", len(rec.Probes), len(passing)+7, len(res.Failed))
	}
	for _, p := range rec.Probes {
		if !p.Passed() {
			t.Errorf("probe %+v did not pass", p)
		}
	}
	if !strings.HasPrefix(rec.HostVerification["landlock"], "abi 4") || rec.Digests.Spec == "" || rec.Digests.Seccomp == "" {
		t.Errorf("host verification %v, digests %+v", rec.HostVerification, rec.Digests)
	}
	if tg := r.eng.targets; len(tg) != 1 || tg[0].ID != rec.RunID || tg[0].PidNS != 4026532002 {
		t.Errorf("teardown targets %+v, want the run with the sandbox's pid namespace", tg)
	}
	r.assertNothingLeft(t)
}

// A launch interrupted after any step is refused at the next, and once its
// run directory exists it is torn down and recorded, whatever step it had
// reached; nothing of it is left.
func TestTeardownAfterAFailureAtEveryStep(t *testing.T) {
	steps := append(slices.Clone(prepareSteps), "start", "self-test")
	for i, after := range steps {
		t.Run(strings.ReplaceAll(after, " ", "-"), func(t *testing.T) {
			r := newFakeRun(t, fakeInit{Probes: passing})
			r.cancelAfter = after
			res, err := r.run(t)
			want := "self-test" // Start and Verify end in the self-test's refusal
			if i+1 < len(prepareSteps) {
				want = steps[i+1]
			}
			if next, ok := afterGroup(t, after); ok {
				want = next // AfterStep sees a group's steps once the group is done
			}
			var e *Error
			if !errors.As(err, &e) || e.Step != want || e.Kind != KindRefused || res.ExitCode != ExitRefused {
				t.Fatalf("error %v (exit %d), want a refusal at %q (exit 3)", err, res.ExitCode, want)
			}
			reached := slices.Index(prepareSteps, "run directory") <= i
			calls := r.eng.called()
			if torn := slices.Contains(calls, "teardown"); torn != reached || slices.Index(calls, "teardown") != len(calls)-1 {
				t.Errorf("engine calls %v; want teardown last, and only once a run directory existed", calls)
			}
			recs := r.records(t)
			switch {
			case !reached && len(recs) != 0:
				t.Errorf("%d records of a launch that had no run directory", len(recs))
			case reached && (len(recs) != 1 || recs[0].ExitCode != ExitRefused || !strings.Contains(recs[0].Error, "interrupted") || !recs[0].Teardown.Clean()):
				t.Errorf("records %+v, want one with exit 3, the interruption and a clean teardown", recs)
			}
			r.assertNothingLeft(t)
		})
	}
}

// afterGroup is the step after the group (sideBySide) of the recipe that
// step is in, and whether it is in one.
func afterGroup(t *testing.T, step string) (string, bool) {
	t.Helper()
	recipe := (&prepared{planned: &planned{}}).makeSteps(t.Context())
	for i, s := range recipe {
		for _, g := range s.flat() {
			if g.name == step && s.lanes != nil {
				if i+1 == len(recipe) {
					t.Fatalf("the recipe ends in the group of %q", step)
				}
				return recipe[i+1].name, true
			}
		}
	}
	return "", false
}

// An interrupted agent is killed; its death is the exit code, and the
// run is torn down and recorded.
func TestInterruptedAgentIsKilledAndRecorded(t *testing.T) {
	r := newFakeRun(t, fakeInit{Probes: passing, Hang: true})
	r.cancelAfter = "hand over"
	res, err := r.run(t)
	if err != nil || res.ExitCode == 0 {
		t.Fatalf("exit %d, %v; want the killed agent's code", res.ExitCode, err)
	}
	if recs := r.records(t); len(recs) != 1 || recs[0].ExitCode != res.ExitCode || !recs[0].Teardown.Clean() {
		t.Errorf("records %+v", recs)
	}
	r.assertNothingLeft(t)
}

// A failing engine call fails its step as the host's (exit 4), and the run
// is still torn down and recorded.
func TestEngineFailureIsTheHostsAndTornDown(t *testing.T) {
	for call, step := range map[string]string{"write bundle": "bundle", "create": "create", "start": "start"} {
		t.Run(step, func(t *testing.T) {
			r := newFakeRun(t, fakeInit{Probes: passing})
			r.eng.fail[call] = errors.New("the fake engine fails " + call)
			res, err := r.run(t)
			var e *Error
			if !errors.As(err, &e) || e.Step != step || !errors.Is(err, ErrHost) || res.ExitCode != ExitHost {
				t.Fatalf("error %v (exit %d), want the host's at %q", err, res.ExitCode, step)
			}
			if calls := r.eng.called(); calls[len(calls)-1] != "teardown" {
				t.Errorf("engine calls %v, want teardown last", calls)
			}
			if recs := r.records(t); len(recs) != 1 || recs[0].ExitCode != ExitHost || !strings.Contains(recs[0].Error, "the fake engine fails") {
				t.Errorf("records %+v", recs)
			}
			r.assertNothingLeft(t)
		})
	}
}

// A probe that got the wrong answer refuses the launch before the agent
// starts (exit 3); an UNKNOWN accepted with a reason does not, and is
// recorded as a residual.
func TestProbesDecideTheHandOver(t *testing.T) {
	allowed := selftest.Result{Probe: "mount-denied", Expect: selftest.Deny, Decision: selftest.Allow, Observed: "mounted"}
	r := newFakeRun(t, fakeInit{Probes: append(slices.Clone(passing), allowed)})
	res, err := r.run(t)
	var e *Error
	if !errors.As(err, &e) || e.Step != "self-test" || res.ExitCode != ExitRefused || len(res.Failed) != 1 || res.Failed[0].Probe != "mount-denied" {
		t.Fatalf("error %v (exit %d), failed %v; want a refusal naming mount-denied", err, res.ExitCode, res.Failed)
	}
	if !strings.Contains(err.Error(), "agentbox doctor") || strings.Contains(err.Error(), "--allow-unknown") {
		t.Errorf("refusal %q: want the next step, and --allow-unknown only for an UNKNOWN", err)
	}
	if slices.Contains(r.steps, "hand over") {
		t.Error("the agent was handed the sandbox")
	}
	if recs := r.records(t); len(recs) != 1 || recs[0].ExitCode != ExitRefused || len(recs[0].Probes) != len(passing)+1+7 {
		t.Errorf("records %+v", recs)
	}

	unknown := selftest.Result{Probe: "dns-unresolvable", Expect: selftest.Deny, Decision: selftest.Unknown}
	r = newFakeRun(t, fakeInit{Probes: append(slices.Clone(passing), unknown)})
	r.cfg.AllowUnknown = map[string]string{"dns-unresolvable": "no resolver on this test host"}
	if res, err = r.run(t); err != nil || res.ExitCode != 0 {
		t.Fatalf("an accepted UNKNOWN: exit %d, %v", res.ExitCode, err)
	}
	if recs := r.records(t); len(recs) != 1 || !slices.ContainsFunc(recs[0].Residuals, func(x ledger.Residual) bool {
		return x.Code == "probe-unknown-accepted" && strings.Contains(x.Detail, "no resolver")
	}) {
		t.Errorf("records %+v, want the accepted UNKNOWN as a residual", recs)
	}
}

// Bad input stops the launch before anything exists (exit 2): no run
// directory, no engine call, no record.
func TestBadInputChangesNothing(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"bad limit":                 func(c *Config) { c.Policy.Limits.Memory = "lots" },
		"json without evidence":     func(c *Config) { c.JSON = true },
		"evidence file that exists": func(c *Config) { c.Evidence = "/etc/passwd" },
	} {
		t.Run(name, func(t *testing.T) {
			r := newFakeRun(t, fakeInit{Probes: passing})
			mutate(&r.cfg)
			res, err := r.run(t)
			if !errors.Is(err, ErrUsage) || res.ExitCode != ExitUsage {
				t.Fatalf("error %v (exit %d), want a usage error", err, res.ExitCode)
			}
			if calls := r.eng.called(); len(calls) != 0 {
				t.Errorf("engine calls %v", calls)
			}
			if recs := r.records(t); len(recs) != 0 {
				t.Errorf("records %+v", recs)
			}
			if _, err := os.Stat(filepath.Join(r.cfg.Dirs.RunRoot, "runs")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a run directory was made: %v", err)
			}
		})
	}
}

// A self-test runs every probe and the host's verification, starts no
// agent, and records a selftest whose exit code says whether it passed.
func TestSelfTestOnTheFakeEngine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		probes []selftest.Result
		want   int
	}{
		{"passing", passing, ExitOK},
		{"failing", append(slices.Clone(passing), selftest.Result{Probe: "bpf-denied", Expect: selftest.Deny, Decision: selftest.Allow}), ExitFindings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFakeRun(t, fakeInit{Probes: tc.probes, Stdout: "never printed", Exit: 9})
			r.cfg.ProbesOnly, r.cfg.Argv = true, nil
			res, err := r.run(t)
			if err != nil || res.ExitCode != tc.want {
				t.Fatalf("exit %d, %v; want %d", res.ExitCode, err, tc.want)
			}
			if diff := cmp.Diff(append(slices.Clone(prepareSteps), "start", "self-test"), r.steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if out, _ := os.ReadFile(r.stdout.Name()); len(out) != 0 {
				t.Errorf("a self-test's sandbox wrote %q to stdout", out)
			}
			recs := r.records(t)
			if len(recs) != 1 || recs[0].Kind != ledger.KindSelftest || recs[0].ExitCode != tc.want || len(recs[0].Probes) != len(tc.probes)+7 {
				t.Errorf("records %+v", recs)
			}
			r.assertNothingLeft(t)
		})
	}
}
