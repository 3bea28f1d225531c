package selftest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", p, d)
	}
}

func fixtureHost(t *testing.T) HostState {
	t.Helper()
	h, err := ReadHostState("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	h.RunID = "run-fixture"
	h.AllowSources = []string{"/var/lib/agentbox/run-1", "/home/ana/src/project", "/run/agentbox/init"}
	return h
}

func TestVerifyHost(t *testing.T) {
	for _, tc := range []struct {
		pid  int
		want Decision
	}{{4242, Deny}, {4343, Allow}} {
		results := VerifyHost("testdata/proc", tc.pid, fixtureHost(t))
		var buf bytes.Buffer
		for _, r := range results {
			if !r.Verify() {
				t.Errorf("%s: evidence does not match its fields", r.Probe)
			}
			if r.Decision != tc.want {
				t.Errorf("pid %d %s: decision %s (%s), want %s", tc.pid, r.Probe, r.Decision, r.Detail, tc.want)
			}
			b, _ := json.Marshal(r)
			buf.Write(append(b, '\n'))
		}
		golden(t, filepath.Join("verify", "pid"+itoaT(tc.pid)+".jsonl"), buf.Bytes())
	}
}

func itoaT(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestVerifyHostUnknownWithoutHostState(t *testing.T) {
	r := VerifyHost("testdata/proc", 4242, HostState{})
	for _, res := range r {
		if res.Probe == "host-namespaces" && res.Decision != Unknown {
			t.Errorf("namespaces without host state: %s, want UNKNOWN", res.Decision)
		}
	}
	r = VerifyHost("testdata/proc", 9999, fixtureHost(t))
	for _, res := range r {
		if res.Decision != Unknown {
			t.Errorf("missing pid %s: %s, want UNKNOWN", res.Probe, res.Decision)
		}
	}
}

func TestHostSourceAndClassify(t *testing.T) {
	h := fixtureHost(t)
	tests := []struct {
		m    Mount
		src  string
		kind string
	}{
		{Mount{Dev: "8:1", Root: "/", MountPoint: "/"}, "/", "host-root"},
		{Mount{Dev: "8:2", Root: "/ana", Options: "ro"}, "/home/ana", "home"},
		{Mount{Dev: "8:2", Root: "/ana/.aws/credentials", Options: "ro"}, "/home/ana/.aws/credentials", "home-secret"},
		{Mount{Dev: "8:2", Root: "/", Options: "ro"}, "/home", "home"},
		{Mount{Dev: "0:24", Root: "/containerd/containerd.sock"}, "/run/containerd/containerd.sock", "engine-socket"},
		{Mount{Dev: "0:24", Root: "/agentbox/init", Options: "ro"}, "/run/agentbox/init", ""},
		{Mount{Dev: "0:24", Root: "/user/1000", Options: "ro"}, "/run/user/1000", "system-directory"},
		{Mount{Dev: "8:1", Root: "/usr", Options: "ro"}, "/usr", ""},
		{Mount{Dev: "8:1", Root: "/usr", Options: "rw"}, "/usr", "writable-system-directory"},
	}
	for _, tc := range tests {
		src, ok := hostSource(h.Mounts, tc.m)
		if !ok || src != tc.src {
			t.Errorf("hostSource(%+v) = %q, %v; want %q", tc.m, src, ok, tc.src)
			continue
		}
		kind := classifySource(src, tc.m, h)
		if kind != tc.kind {
			t.Errorf("classifySource(%q) = %q, want %q", src, kind, tc.kind)
		}
	}
}
