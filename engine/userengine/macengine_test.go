package userengine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// fakeMac answers the macOS commands as a Mac would, from a little state:
// the account's live pids (pkill empties them unless stubborn), the
// anchor's rules, and every argv run, in order.
type fakeMac struct {
	pids     []int
	stubborn bool
	rules    string
	ran      [][]string
	fail     map[string]bool // argv[0] + " " + argv[1] that fail
}

func (f *fakeMac) exec(_ context.Context, argv []string) (string, int, error) {
	f.ran = append(f.ran, argv)
	if f.fail[argv[0]+" "+argv[1]] {
		return "refused", 1, nil
	}
	switch {
	case argv[0] == macPkill:
		if len(f.pids) == 0 {
			return "", 1, nil
		}
		if !f.stubborn {
			f.pids = nil
		}
	case argv[0] == macPgrep:
		if len(f.pids) == 0 {
			return "", 1, nil
		}
		var b strings.Builder
		for _, p := range f.pids {
			b.WriteString(strconv.Itoa(p) + "\n")
		}
		return b.String(), 0, nil
	case argv[0] == macPfctl && slices.Contains(argv, "-E"):
		f.rules = "block return out quick inet proto tcp all user = 451\n"
		return "No ALTQ support in kernel\npf enabled\nToken : 77\n", 0, nil
	case argv[0] == macPfctl && slices.Contains(argv, "-F"):
		f.rules = ""
	case argv[0] == macPfctl && slices.Contains(argv, "-s"):
		return f.rules, 0, nil
	}
	return "", 0, nil
}

func newFakeEngine(t *testing.T, f *fakeMac) (*MacEngine, string) {
	t.Helper()
	dir := t.TempDir()
	r := testMacRun()
	r.Profile, r.Anchor, r.Home, r.PFToken = filepath.Join(dir, "agent.sb"), filepath.Join(dir, "pf.anchor"), "", ""
	e := &MacEngine{Run: r, Exec: f.exec}
	bundle := filepath.Join(dir, "bundle")
	if err := e.WriteBundle(bundle, &specs.Spec{Process: &specs.Process{Args: r.StarterArgv()}}, policy.Rootfs{}); err != nil {
		t.Fatal(err)
	}
	return e, bundle
}

func names(ran [][]string) []string {
	var out []string
	for _, a := range ran {
		out = append(out, filepath.Base(a[0])+" "+a[1])
	}
	return out
}

func TestMacEngineRecordsWhatItMakesBeforeUsingIt(t *testing.T) {
	f := &fakeMac{}
	e, bundle := newFakeEngine(t, f)
	for _, p := range []string{e.Run.Profile, e.Run.Anchor, filepath.Join(bundle, "config.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("WriteBundle did not write %s: %v", p, err)
		}
	}
	if err := e.LoadFence(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Grant(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, ok := RecordedMac(bundle)
	if !ok || got.Run.PFToken != "77" || !got.Run.Granted || got.Run.UID != 451 {
		t.Fatalf("RecordedMac = %+v, %v; want the token and the grant recorded", got, ok)
	}
	if _, ok := RecordedMac(t.TempDir()); ok {
		t.Error("RecordedMac found a run in an empty bundle")
	}
}

func TestMacEngineLoadFenceRefusesAnAnchorWithoutTheAccountsRules(t *testing.T) {
	f := &fakeMac{}
	e, _ := newFakeEngine(t, &fakeMac{})
	e.Exec = func(ctx context.Context, argv []string) (string, int, error) {
		out, code, err := f.exec(ctx, argv)
		if slices.Contains(argv, "-s") {
			return "", 0, nil // pf did not take the rules
		}
		return out, code, err
	}
	if err := e.LoadFence(context.Background()); err == nil || !strings.Contains(err.Error(), "no rule of uid 451") {
		t.Errorf("LoadFence = %v, want a refusal", err)
	}
}

func TestMacEngineTeardown(t *testing.T) {
	f := &fakeMac{pids: []int{7}}
	e, _ := newFakeEngine(t, f)
	ctx := context.Background()
	if err := e.LoadFence(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Grant(ctx); err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	cleaned := false
	f.ran = nil
	rec := e.Teardown(ctx, engine.Target{RunDir: runDir}, func() error { cleaned = true; return nil })
	if rec.Decision != ledger.DecisionClean || !rec.Clean() {
		t.Errorf("teardown = %+v, want clean", rec)
	}
	want := []string{"pkill -KILL", "pgrep -U", "pfctl -a", "pfctl -a", "pfctl -X", "chmod -R", "find -x"}
	if got := names(f.ran); !slices.Equal(got, want) {
		t.Errorf("teardown ran %q, want %q", got, want)
	}
	if !cleaned {
		t.Error("the launcher's cleanups did not run")
	}
	if _, err := os.Stat(runDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("run directory left: %v", err)
	}
}

func TestMacEngineTeardownReportsWhatSurvives(t *testing.T) {
	f := &fakeMac{pids: []int{7}, stubborn: true, fail: map[string]bool{"/bin/chmod -R": true}}
	e, _ := newFakeEngine(t, f)
	ctx := context.Background()
	if err := e.LoadFence(ctx); err != nil {
		t.Fatal(err)
	}
	_ = e.Grant(ctx)
	f.ran = nil
	rec := e.Teardown(ctx, engine.Target{RunDir: t.TempDir()})
	if rec.Decision != ledger.DecisionResidue || !slices.Equal(rec.SurvivingPIDs, []int{7}) {
		t.Errorf("teardown = %+v, want residue with pid 7 surviving", rec)
	}
	if !slices.ContainsFunc(rec.RuntimeStateLeft, func(s string) bool { return strings.HasPrefix(s, "ACL entry user:_agentbox") }) {
		t.Errorf("the failed revoke is not named: %+v", rec.RuntimeStateLeft)
	}
	if slices.Contains(names(f.ran), "find -x") {
		t.Error("files given back while a process of the account lives")
	}
}
