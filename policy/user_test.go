package policy

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func userRun() Run {
	return Run{ID: "R", Dir: "/run/agentbox/runs/R", Bundle: "/run/agentbox/runs/R/bundle", GatewayToken: "TOKEN", Target: TargetUser, GatewayPort: 41234}
}

func userHost(f *fakeFS) Host {
	h := testHost(f)
	h.InitPath = "/usr/libexec/agentbox/agentbox-init"
	h.Account = &UserAccount{Name: "agentbox-agent", UID: 990, GID: 990, Home: "/var/lib/agentbox-agent"}
	return h
}

// TestResolveUser is the whole plan for --isolation user, against
// testdata/user-plan.json (-update rewrites it).
func TestResolveUser(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 1000, 1000)
	plan, err := Resolve(Policy{Isolation: IsolationUser}, []string{"sh", "-c", "id"}, userHost(f), userRun())
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "user-plan.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)+"\n"); d != "" {
		t.Errorf("plan (-golden +got):\n%s", d)
	}
	// The facts the golden file must keep, said in words.
	if plan.Runtime != (Runtime{}) || plan.Rootfs.Files != nil || plan.CgroupsPath != "/agentbox/R" {
		t.Errorf("runtime %+v, rootfs files %v, cgroup %q: want no runtime, no synthesized root, the run's cgroup", plan.Runtime, plan.Rootfs.Files, plan.CgroupsPath)
	}
	if plan.Identity.UID != 990 || plan.Identity.Home != "/var/lib/agentbox-agent/runs/R" || !plan.Identity.GrantWorkspace || plan.Identity.IDMap.Mode != IDHost {
		t.Errorf("identity %+v", plan.Identity)
	}
	for _, kv := range plan.Env {
		if kv == "OPENAI_API_KEY=sk-secret" || kv == "AWS_SECRET_ACCESS_KEY=x" || kv == "HOME=/root" {
			t.Errorf("env %q crossed", kv)
		}
	}
	for _, m := range plan.Mounts {
		if m.Kind != KindWorkspace && m.Kind != KindInstall {
			t.Errorf("a user plan without protected paths or sockets binds nothing more, yet has %+v", m)
		}
	}
	if plan.Landlock == nil || !plan.Landlock.RestrictTCP || !cmp.Equal(plan.Landlock.ConnectTCP, []uint16{41234}) {
		t.Errorf("landlock %+v: want TCP to the gateway's port only", plan.Landlock)
	}
}

func TestResolveUserRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*Host, *Run)
		want  any
	}{
		{"no account", func(h *Host, _ *Run) { h.Account = nil }, new(*HostError)},
		{"not root", func(h *Host, _ *Run) { h.EUID = 1000 }, new(*HostError)},
		{"account is root", func(h *Host, _ *Run) { h.Account.UID = 0 }, new(*RefusedError)},
		{"no gateway port", func(_ *Host, r *Run) { r.GatewayPort = 0 }, new(*InputError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFS()
			f.dir("/srv/proj", 1000, 1000)
			h, run := userHost(f), userRun()
			tc.setup(&h, &run)
			_, err := Resolve(Policy{}, []string{"sh"}, h, run)
			if err == nil || !errors.As(err, tc.want) {
				t.Fatalf("got %v, want a %T", err, tc.want)
			}
		})
	}
}

func TestValidateIsolation(t *testing.T) {
	if err := Validate(Policy{Isolation: "user"}, Source{}); err != nil {
		t.Errorf("user: %v", err)
	}
	if err := Validate(Policy{Isolation: "vm"}, Source{}); err == nil {
		t.Error("vm: accepted")
	}
	if TargetOf(Policy{Isolation: "user"}) != TargetUser || TargetOf(Policy{}) != TargetRuntime {
		t.Error("TargetOf")
	}
}

// TestResolveUserProtectsAndTerminal: a user plan binds the workspace's
// protected paths and covers its sockets as a sandbox's does (agentbox-init
// makes the binds), keeps them out of the Landlock ruleset, gives the agent
// a terminal when the host has one, and records neither
// user-no-protected-paths nor, with the terminal, user-no-terminal.
func TestResolveUserProtectsAndTerminal(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 1000, 1000)
	f.dir("/srv/proj/.git", 1000, 1000)
	f.dir("/srv/proj/.git/hooks", 1000, 1000)
	f.file("/srv/proj/agentbox.yaml", 0o644, 1000)
	h := userHost(f)
	h.Terminal = true
	h.WorkspaceSockets = []string{"run/nvim.sock"}
	plan, err := Resolve(Policy{Isolation: IsolationUser}, []string{"sh"}, h, userRun())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]MountKind{"/srv/proj/.git/hooks": KindProtected, "/srv/proj/agentbox.yaml": KindProtected, "/srv/proj/run/nvim.sock": KindCover}
	for _, m := range plan.Mounts {
		if k, ok := want[m.Destination]; ok && k == m.Kind && m.ReadOnly {
			delete(want, m.Destination)
		}
	}
	if len(want) != 0 {
		t.Errorf("binds missing from the plan: %v (mounts %+v)", want, plan.Mounts)
	}
	for _, p := range plan.Landlock.Paths {
		if strings.HasPrefix(p.Path, "/srv/proj/") {
			t.Errorf("landlock rule %+v inside the workspace", p)
		}
	}
	if !plan.Terminal {
		t.Error("no terminal for a host with one")
	}
	for _, r := range plan.Residuals {
		if r.Code == "user-no-protected-paths" || r.Code == "user-no-terminal" {
			t.Errorf("residual %s: %s", r.Code, r.Reason)
		}
	}
}
