package doctor

import (
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
		{"a tested 2.x line", func(f *Facts) { f.Runtimes[0].Version = "1.4.1"; f.Containerd.Version = "v2.4.2" }, Pass, "containerd v2.4.2 answers on " + containerdSocket + "; its runc shim"},
		{"an untested line", func(f *Facts) { f.Runtimes[0].Version = "1.4.1"; f.Containerd.Version = "2.1.4" }, Pass, "(containerd 2.1 is not a release line agentbox's tests run against (1.6.20, 1.7.35, 2.4.2); the engine makes only calls that containerd has had since 1.6.0); its runc shim"},
		{"no shim", func(f *Facts) { f.Containerd.Shim = "" }, Warn, "containerd-shim-runc-v2 is not on PATH"},
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
