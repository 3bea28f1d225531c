package launcher

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/policy"
)

// agentbox spec is Run's recipe, dry: its pure prefix, then the ids and
// the render, in the same order, without the steps that make something
// between them; it calls no engine, makes no run directory and leases no
// ids, and its spec is what a run renders (the plan's cgroup and seccomp
// profile).
func TestSpecIsTheRunsRecipeDry(t *testing.T) {
	r := newFakeRun(t, fakeInit{Probes: passing})
	s, err := Spec(t.Context(), r.cfg)
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	dry := slices.DeleteFunc(slices.Clone(prepareSteps[:slices.Index(prepareSteps, "runtime")+1]), func(s string) bool {
		return s == "gc" || s == "run directory"
	})
	if diff := cmp.Diff(dry, r.steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if calls := r.eng.called(); len(calls) != 0 {
		t.Errorf("engine calls %v", calls)
	}
	want := ""
	if os.Geteuid() == 0 {
		want = "/agentbox/" + policy.RunIDPlaceholder
	}
	if s.Linux == nil || s.Linux.CgroupsPath != want || s.Linux.Seccomp == nil || len(s.Linux.Seccomp.Syscalls) == 0 {
		t.Errorf("spec's cgroup %q (want %q), seccomp %v", s.Linux.CgroupsPath, want, s.Linux.Seccomp != nil)
	}
	r.assertNothingLeft(t)
	if recs := r.records(t); len(recs) != 0 {
		t.Errorf("spec recorded %d runs", len(recs))
	}
}

// agentbox spec plans and renders with a run root and state directory
// that do not exist, and makes neither.
func TestSpecCreatesNothing(t *testing.T) {
	r := newFakeRun(t, fakeInit{Probes: passing})
	base := t.TempDir()
	r.cfg.Dirs = Dirs{State: filepath.Join(base, "state"), RunRoot: filepath.Join(base, "run")}
	if _, err := Spec(t.Context(), r.cfg); err != nil {
		t.Fatalf("spec: %v", err)
	}
	if left, _ := os.ReadDir(base); len(left) != 0 {
		t.Errorf("spec made %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(r.ws, ".agentbox-*")); len(left) != 0 {
		t.Errorf("spec left %v in the workspace", left)
	}
}

// agentbox spec shows the config.json a run writes: the same but for what
// differs by design, the run's id (in the cgroup and the run directory's
// paths) and its gateway token, which spec shows as placeholders, and the
// cover over the workspace socket canary that only a run plants.
func TestSpecIsTheConfigARunWrites(t *testing.T) {
	r := newFakeRun(t, fakeInit{Probes: passing})
	s, err := Spec(t.Context(), r.cfg)
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, r.cfg.Stderr)
	}
	if len(r.eng.bundles) != 1 {
		t.Fatalf("%d bundles written, want 1", len(r.eng.bundles))
	}
	var ran specs.Spec
	if err := json.Unmarshal(r.eng.bundles[0], &ran); err != nil {
		t.Fatal(err)
	}
	id := res.Record.RunID
	ran.Mounts = slices.DeleteFunc(ran.Mounts, func(m specs.Mount) bool {
		return strings.Contains(m.Destination, ".agentbox-canary-"+id)
	})
	norm := func(sp *specs.Spec, id, token string) string {
		data, err := json.MarshalIndent(sp, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(string(data), id, policy.RunIDPlaceholder)
		if token != "" {
			out = strings.ReplaceAll(out, token, policy.GatewayTokenPlaceholder)
		}
		return out
	}
	token := ""
	for _, kv := range ran.Process.Env {
		if v, ok := strings.CutPrefix(kv, agents.TokenEnv+"="); ok {
			token = v
		}
	}
	if token == "" || token == policy.GatewayTokenPlaceholder {
		t.Fatalf("the run's spec carries token %q, want the run's own", token)
	}
	if d := cmp.Diff(norm(s, policy.RunIDPlaceholder, ""), norm(&ran, id, token)); d != "" {
		t.Errorf("spec and run differ beyond the run id and token (-spec +run):\n%s", d)
	}
}
