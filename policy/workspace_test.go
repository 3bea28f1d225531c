package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repoFS is /srv/proj with a .git directory holding config, hooks and
// info, and an agentbox.yaml.
func repoFS(f *fakeFS, _ *Host) {
	for _, d := range []string{"/srv/proj/.git", "/srv/proj/.git/hooks", "/srv/proj/.git/info"} {
		f.dir(d, 0, 0)
	}
	f.file("/srv/proj/.git/config", 0o644, 0)
	f.file("/srv/proj/agentbox.yaml", 0o644, 0)
}

func TestResolveProtected(t *testing.T) {
	tests := []struct {
		name    string
		protect []string
		setup   func(*fakeFS, *Host)
		want    []string
		// residual, when set, must be among the plan's residuals.
		residual string
	}{
		{name: "defaults that exist", setup: repoFS, want: []string{"/srv/proj/.git/config", "/srv/proj/.git/hooks", "/srv/proj/.git/info", "/srv/proj/agentbox.yaml"}},
		{name: "nothing exists, nothing is created", want: nil},
		{name: "an explicit list replaces the default", protect: []string{".git/config", "Makefile"}, setup: func(f *fakeFS, h *Host) {
			repoFS(f, h)
			f.file("/srv/proj/Makefile", 0o644, 0)
		}, want: []string{"/srv/proj/.git/config", "/srv/proj/Makefile"}},
		{name: "an empty list protects nothing", protect: []string{}, setup: repoFS, want: nil},
		{name: "a gitdir file is protected itself", setup: func(f *fakeFS, _ *Host) {
			f.file("/srv/proj/.git", 0o644, 0)
		}, want: []string{"/srv/proj/.git"}},
		{name: "a symlinked .git is not followed", setup: func(f *fakeFS, _ *Host) {
			f.dir("/srv/other", 0, 0)
			f.file("/srv/other/config", 0o644, 0)
			f.link("/srv/proj/.git", "/srv/other")
		}, want: nil, residual: "protected-path-behind-symlink"},
		{name: "a symlinked config is not followed", setup: func(f *fakeFS, _ *Host) {
			f.dir("/srv/proj/.git", 0, 0)
			f.link("/srv/proj/.git/config", "/etc/passwd")
		}, want: nil, residual: "protected-path-behind-symlink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := resolve(t, Policy{Protect: tt.protect}, []string{"sh"}, tt.setup)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range mountsOf(plan, KindProtected) {
				if !m.ReadOnly || m.Source != m.Destination {
					t.Errorf("%+v: want a read-only bind over itself", m)
				}
				got = append(got, m.Destination)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("protected (-want +got):\n%s", d)
			}
			if tt.residual != "" && !hasResidual(plan, tt.residual) {
				t.Errorf("residuals %+v, want %s", plan.Residuals, tt.residual)
			}
		})
	}
}

func hasResidual(p *Plan, code string) bool {
	for _, r := range p.Residuals {
		if r.Code == code {
			return true
		}
	}
	return false
}

// A bind the user asks for at a protected path wins over the protection.
func TestResolveProtectedYieldsToABind(t *testing.T) {
	plan, err := resolve(t, Policy{Binds: Binds{ReadWrite: []string{"/srv/proj/.git/hooks"}}}, []string{"sh"}, repoFS)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range plan.Mounts {
		if m.Destination == "/srv/proj/.git/hooks" && m.Kind != KindExtra {
			t.Errorf("%+v: the user's read-write bind must be the one mount there", m)
		}
	}
}

func TestCoverSockets(t *testing.T) {
	plan, err := resolve(t, Policy{}, []string{"sh"}, func(_ *fakeFS, h *Host) {
		h.WorkspaceSockets = []string{"run/nvim.sock", ".git/fsmonitor--daemon.ipc", "../escape", ""}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{Kind: KindCover, Source: "/run/agentbox/runs/R/bundle/socket-cover", Destination: "/srv/proj/.git/fsmonitor--daemon.ipc", ReadOnly: true},
		{Kind: KindCover, Source: "/run/agentbox/runs/R/bundle/socket-cover", Destination: "/srv/proj/run/nvim.sock", ReadOnly: true},
	}
	if d := cmp.Diff(want, mountsOf(plan, KindCover)); d != "" {
		t.Errorf("covers (-want +got):\n%s", d)
	}
	for abi, want := range map[int]bool{6: true, 7: true, 9: false} {
		plan, err := resolve(t, Policy{}, []string{"sh"}, func(_ *fakeFS, h *Host) { h.LandlockABI = abi })
		if err != nil {
			t.Fatal(err)
		}
		if got := hasResidual(plan, "workspace-socket-after-launch"); got != want {
			t.Errorf("Landlock ABI %d: residual %v, want %v", abi, got, want)
		}
	}
	plan, err = resolve(t, Policy{}, []string{"sh"}, func(_ *fakeFS, h *Host) { h.AppArmor, h.AppArmorReady = true, true })
	if err != nil || !hasResidual(plan, "workspace-socket-after-launch") {
		t.Errorf("with an LSM label Landlock is not applied: want the residual (%v, %+v)", err, plan)
	}
}

func TestResolveRefusesWorkspaceLinksOut(t *testing.T) {
	setup := func(f *fakeFS, _ *Host) {
		f.dir("/root/.ssh", 0, 0)
		f.file("/root/.ssh/id_ed25519", 0o600, 0)
		f.dir("/srv/proj/inside", 0, 0)
		f.file("/home/ana/tool", 0o755, 1000)
		f.link("/srv/proj/cache", "/root/.ssh")
		f.link("/srv/proj/rel", "../../root/.ssh")
		f.link("/srv/proj/hop", "cache")
		f.link("/srv/proj/ok", "inside")
		f.link("/srv/proj/script", "/home/ana/tool")
		f.link("/srv/elsewhere", "/srv/proj/inside")
	}
	for _, tt := range []struct {
		name   string
		policy Policy
		argv   []string
		// refused names the link the error must name; "" means accepted.
		refused string
	}{
		{"rw bind through a planted link", Policy{Binds: Binds{ReadWrite: []string{"./cache"}}}, []string{"sh"}, "/srv/proj/cache -> /root/.ssh"},
		{"ro bind through a planted link", Policy{Binds: Binds{ReadOnly: []string{"/srv/proj/cache"}}}, []string{"sh"}, "/srv/proj/cache -> /root/.ssh"},
		{"a relative link", Policy{Binds: Binds{ReadOnly: []string{"rel"}}}, []string{"sh"}, "/srv/proj/rel -> ../../root/.ssh"},
		{"a chain of links", Policy{Binds: Binds{ReadOnly: []string{"hop"}}}, []string{"sh"}, "/srv/proj/hop -> cache"},
		{"below a link", Policy{Binds: Binds{ReadOnly: []string{"./cache/id_ed25519"}}}, []string{"sh"}, "/srv/proj/cache -> /root/.ssh"},
		{"./script through a planted link", Policy{}, []string{"./script"}, "/srv/proj/script -> /home/ana/tool"},
		{"a link that stays inside", Policy{Binds: Binds{ReadWrite: []string{"ok"}}}, []string{"sh"}, ""},
		{"a link outside the workspace is the user's", Policy{Binds: Binds{ReadWrite: []string{"/srv/elsewhere"}}}, []string{"sh"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resolve(t, tt.policy, tt.argv, setup)
			var in *InputError
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.refused == "":
			case !errors.As(err, &in):
				t.Fatalf("err %v, want an InputError naming %s", err, tt.refused)
			case !strings.Contains(in.Msg, tt.refused) || !strings.Contains(in.Msg, "outside the workspace"):
				t.Errorf("message %q does not name the link %s", in.Msg, tt.refused)
			}
		})
	}
}

func TestRealPathLoop(t *testing.T) {
	_, err := resolve(t, Policy{Binds: Binds{ReadOnly: []string{"/srv/proj/a"}}}, []string{"sh"}, func(f *fakeFS, _ *Host) {
		f.link("/srv/proj/a", "b")
		f.link("/srv/proj/b", "a")
	})
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(in.Msg, "too many levels of symbolic links") {
		t.Errorf("a symlink loop: %v, want it named as one (not as a missing path)", err)
	}
}

func TestValidateProtect(t *testing.T) {
	for _, bad := range []string{"", "/etc/passwd", "../x", "a/../b", ".", "a//b"} {
		if err := Validate(Policy{Protect: []string{bad}}, Source{}); err == nil {
			t.Errorf("protect %q accepted", bad)
		}
	}
	if err := Validate(Policy{Protect: []string{".git/config", "scripts/deploy.sh"}}, Source{}); err != nil {
		t.Error(err)
	}
}
