package compose

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentbox/agentbox/host"
	"github.com/agentbox/agentbox/policy"
)

// TestPlanRunResolves: a plan for a compose project resolves, from the
// host's own facts, on any host, runc or not, with limits and host ids, and
// renders with the plan's decisions.
func TestPlanRunResolves(t *testing.T) {
	ws := t.TempDir()
	h := policy.Host{
		EUID: 0, Cwd: ws, FS: host.OSFS{}, Environ: []string{"TERM=dumb", "GITHUB_TOKEN=x", "LC_ALL=C"},
		CanLimit: false, LimitReason: "no delegation", InitPath: "/usr/lib/agentbox/agentbox-init",
	}
	p := policy.Policy{Runtime: "no-such-runtime-on-this-host", Limits: policy.Limits{Memory: "1GiB", Pids: 64, CPUWeight: 200}}
	plan, err := policy.Resolve(p, PlanArgv, h, PlanRun())
	if err != nil {
		t.Fatal(err)
	}
	if plan.Init != "" || plan.Limits == nil || plan.Limits.MemoryBytes != 1<<30 || plan.Limits.Pids != 64 {
		t.Fatalf("plan: init %q limits %+v", plan.Init, plan.Limits)
	}
	aa := h
	aa.AppArmor = true
	if p, err := policy.Resolve(policy.Policy{}, PlanArgv, aa, PlanRun()); err != nil || p.LSM.Kind != policy.LSMAppArmor {
		t.Errorf("with AppArmor enabled the plan chose %+v (%v), want agentbox's profile", p.LSM, err)
	}
	out, err := Render(plan, testOptions(ws, "codex"))
	if err != nil {
		t.Fatal(err)
	}
	a := out.Project.Services[AgentService]
	wantUser, rootOwned := "1000:1000", true
	if fi, err := os.Stat(ws); err == nil {
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 {
			wantUser, rootOwned = fmt.Sprintf("%d:%d", st.Uid, st.Gid), false
			if st.Gid == 0 {
				wantUser = fmt.Sprintf("%d:%d", st.Uid, policy.AgentGID)
			}
		}
	}
	if a.User != wantUser || a.CPUShares != 2048 || a.PidsLimit != 64 {
		t.Errorf("user %q (want %q) shares %d pids %d", a.User, wantUser, a.CPUShares, a.PidsLimit)
	}
	if _, ok := a.Environment["LC_ALL"]; !ok {
		t.Error("the allowlisted LC_ALL does not pass through")
	}
	if _, ok := a.Environment["GITHUB_TOKEN"]; ok {
		t.Error("GITHUB_TOKEN, not on the allowlist, reached the agent")
	}
	if rootOwned && len(out.Notes) < 2 {
		t.Errorf("a root-owned workspace gets no note on how the agent writes it: %v", out.Notes)
	}
}

func TestExistingToken(t *testing.T) {
	opts := testOptions(t.TempDir(), "codex")
	o, err := Render(testPlan("/work/project"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(opts.OutDir, o.Files, false); err != nil {
		t.Fatal(err)
	}
	out := opts.OutDir
	if got := ExistingToken(out); got != testToken {
		t.Errorf("ExistingToken = %q, want the rendered token", got)
	}
	for name, content := range map[string]string{
		"list":  "services:\n  agent:\n    environment: [\"" + KeyEnv + "=" + testToken + "\"]\n",
		"short": "services:\n  agent:\n    environment: {" + KeyEnv + ": agentbox-gw-x}\n",
		"other": "services:\n  agent:\n    environment: {" + KeyEnv + ": sk-real}\n",
		"bad":   "services: [\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ComposeFile), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		want := ""
		if name == "list" {
			want = testToken
		}
		if got := ExistingToken(dir); got != want {
			t.Errorf("%s: ExistingToken = %q, want %q", name, got, want)
		}
	}
	if got := ExistingToken(t.TempDir()); got != "" {
		t.Errorf("empty dir: %q", got)
	}
}

func TestResolveOutDir(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	got, err := ResolveOutDir(filepath.Join(link, "a", "b"))
	if err != nil || got != filepath.Join(real, "a", "b") {
		t.Errorf("ResolveOutDir = %q, %v; want %q", got, err, filepath.Join(real, "a", "b"))
	}
}
