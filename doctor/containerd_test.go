package doctor

import (
	"context"
	"strings"
	"testing"
)

func TestParseCtrServerVersion(t *testing.T) {
	out := "Client:\n  Version:  1.6.20~ds1\n  Revision: 1.6.20~ds1-1+deb12u3\n  Go version: go1.19.8\n\nServer:\n  Version:  1.7.24\n  Revision: abc\n  UUID: 1234\n"
	if got := parseCtrServerVersion(out); got != "1.7.24" {
		t.Errorf("server version %q, want 1.7.24 (not the client's)", got)
	}
	if got := parseCtrServerVersion("Client:\n  Version:  1.6.20\n"); got != "" {
		t.Errorf("no server section: %q, want empty", got)
	}
}

func TestCheckContainerd(t *testing.T) {
	base := func() *Facts {
		return &Facts{
			OS:       OSRelease{ID: "debian"},
			Runtimes: []RuntimeFacts{{Name: "runc", Path: "/usr/sbin/runc", Version: "1.1.5"}},
			Containerd: &ContainerdFacts{
				Address: containerdSocket, SocketFound: true, Version: "1.6.20~ds1", Shim: "/usr/bin/containerd-shim-runc-v2",
			},
		}
	}
	tests := []struct {
		name   string
		change func(*Facts)
		status Status
		detail string
	}{
		{"not here", func(f *Facts) { f.Containerd = nil }, "", ""},
		{"ready, its runc unpatched", func(*Facts) {}, Warn, "runc 1.1.5 at /usr/sbin/runc, not from a package): it is not patched: EXPOSED to runc-CVE-2024-21626"},
		{"ready, its runc patched but for what is not exposed", func(f *Facts) { f.Runtimes[0].Version = "1.4.1" }, Pass, "(runc 1.4.1 at /usr/sbin/runc, not from a package): it lacks 1 fixes that the default mode does not expose (runc-CVE-2026-41579)"},
		{"not running", func(f *Facts) { f.Containerd.SocketFound = false }, Pass, "not running"},
		{"version unknown", func(f *Facts) { f.Containerd.Version, f.Containerd.VersionErr = "", "ctr is not on PATH" }, Unknown, "ctr is not on PATH"},
		{"too old", func(f *Facts) { f.Containerd.Version = "1.5.9" }, Warn, "older than 1.6.0"},
		{"a tested 2.x line", func(f *Facts) { f.Runtimes[0].Version = "1.4.1"; f.Containerd.Version = "v2.4.2" }, Pass, "containerd v2.4.2 answers on containerd's default socket " + containerdSocket + "; its runc shim"},
		{"an untested line", func(f *Facts) { f.Runtimes[0].Version = "1.4.1"; f.Containerd.Version = "2.1.4" }, Pass, "(containerd 2.1 is not a release line agentbox's tests run against (1.6.20, 1.7.35, 2.4.2); the engine makes only calls that containerd has had since 1.6.0); its runc shim"},
		{"no shim", func(f *Facts) { f.Containerd.Shim = "" }, Warn, "containerd-shim-runc-v2 is not on PATH"},
		{"its program installed", func(f *Facts) {
			f.Runtimes[0].Version = "1.4.1"
			f.Containerd.Helper = "/usr/local/bin/agentbox-containerd"
		}, Pass, "; launches on it run in /usr/local/bin/agentbox-containerd; its runc shim"},
		{"its program missing", func(f *Facts) {
			f.Containerd.HelperErr = "agentbox-containerd is not installed beside agentbox (/x/agentbox-containerd)"
		}, Warn, "but agentbox cannot run a launch on it: agentbox-containerd is not installed beside agentbox"},
		{"the policy's address", func(f *Facts) { f.Containerd.Address, f.Containerd.FromPolicy = "/run/other/c.sock", true }, Warn, "answers on /run/other/c.sock (the policy's address:)"},
	}
	for _, tt := range tests {
		f := base()
		tt.change(f)
		got := checkContainerd(f)
		if tt.status == "" {
			if len(got) != 0 {
				t.Errorf("%s: %+v, want no result", tt.name, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Status != tt.status || !strings.Contains(got[0].Detail, tt.detail) || got[0].Blocks() {
			t.Errorf("%s: %+v, want one non-blocking %s mentioning %q", tt.name, got, tt.status, tt.detail)
		}
	}
}

// The policy's engine: containerd makes a daemon that cannot run a
// sandbox a failure: agentbox run would fail on it.
func TestCheckContainerdChosenByThePolicy(t *testing.T) {
	for _, tt := range []struct {
		name   string
		c      ContainerdFacts
		detail string
	}{
		{"not running", ContainerdFacts{Address: "/run/x/c.sock", FromPolicy: true, Chosen: true}, "no containerd socket exists at /run/x/c.sock (the policy's address:), which agentbox run uses"},
		{"too old", ContainerdFacts{Address: containerdSocket, Chosen: true, SocketFound: true, Version: "1.5.9", Shim: "/usr/bin/containerd-shim-runc-v2"}, "older than 1.6.0"},
		{"no shim", ContainerdFacts{Address: containerdSocket, Chosen: true, SocketFound: true, Version: "1.7.24"}, "containerd-shim-runc-v2 is not on PATH"},
		{"its program missing", ContainerdFacts{Address: containerdSocket, Chosen: true, SocketFound: true, Version: "1.7.24", Shim: "/usr/bin/containerd-shim-runc-v2", HelperErr: "agentbox-containerd is not installed beside agentbox"}, "agentbox-containerd is not installed"},
	} {
		got := checkContainerd(&Facts{OS: OSRelease{ID: "debian"}, Containerd: &tt.c})
		if len(got) != 1 || got[0].Status != Fail || !got[0].Blocks() || !strings.Contains(got[0].Detail, tt.detail) || !strings.Contains(got[0].Detail, "engine: containerd") || got[0].Fix == "" {
			t.Errorf("%s: %+v, want one blocking FAIL with a fix, mentioning %q and the policy's engine: containerd", tt.name, got, tt.detail)
		}
	}
}

// Doctor asks the daemon the policy would use: its address:, not
// containerd's default socket, even where the default one answers too.
func TestGatherContainerdAsksThePolicysDaemon(t *testing.T) {
	fx := &fixtureHost{
		Path: map[string]string{"containerd": "/usr/bin/containerd", "ctr": "/usr/bin/ctr", "containerd-shim-runc-v2": "/usr/bin/containerd-shim-runc-v2"},
		Commands: map[string]string{
			"/usr/bin/ctr --address " + containerdSocket + " version": "Server:\n  Version:  1.6.20\n",
			"/usr/bin/ctr --address /run/private/c.sock version":      "Server:\n  Version:  1.7.24\n",
		},
		Stats: map[string]fixtureStat{containerdSocket: {Mode: "socket 0660"}, "/run/private/c.sock": {Mode: "socket 0660"}},
	}
	h := Host{Sys: fx}
	for _, tt := range []struct {
		p           ContainerdPolicy
		addr, vers  string
		from, chose bool
	}{
		{ContainerdPolicy{}, containerdSocket, "1.6.20", false, false},
		{ContainerdPolicy{Engine: true}, containerdSocket, "1.6.20", false, true},
		{ContainerdPolicy{Engine: true, Address: "/run/private/c.sock", Helper: "/bin/agentbox-containerd"}, "/run/private/c.sock", "1.7.24", true, true},
	} {
		f := &Facts{}
		gatherContainerd(context.Background(), h, f, tt.p)
		c := f.Containerd
		if c == nil || c.Address != tt.addr || c.Version != tt.vers || c.FromPolicy != tt.from || c.Chosen != tt.chose || !c.SocketFound || c.Helper != tt.p.Helper {
			t.Errorf("policy %+v: %+v, want %s at %s (from policy %v, chosen %v)", tt.p, c, tt.vers, tt.addr, tt.from, tt.chose)
		}
	}
	// Chosen but absent: still reported, so that the check can fail.
	f := &Facts{}
	gatherContainerd(context.Background(), Host{Sys: &fixtureHost{}}, f, ContainerdPolicy{Engine: true, Address: "/run/none/c.sock"})
	if f.Containerd == nil || f.Containerd.SocketFound || !f.Containerd.Chosen {
		t.Errorf("chosen, nothing installed: %+v, want facts of a missing socket", f.Containerd)
	}
	f = &Facts{}
	gatherContainerd(context.Background(), Host{Sys: &fixtureHost{}}, f, ContainerdPolicy{})
	if f.Containerd != nil {
		t.Errorf("not chosen, nothing installed: %+v, want none", f.Containerd)
	}
}
