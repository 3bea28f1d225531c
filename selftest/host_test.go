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
	// 4241 is init (uid 0 inside, its four capabilities) and 4242 its child
	// that became the agent; 4343 is a sandbox with every layer missing,
	// whose init is its agent.
	for _, tc := range []struct {
		pids SandboxPIDs
		want Decision
	}{{SandboxPIDs{Init: 4241, Agent: 4242}, Deny}, {SandboxPIDs{Init: 4343, Agent: 4343}, Allow}} {
		results := VerifyHost("testdata/proc", tc.pids, fixtureHost(t))
		var buf bytes.Buffer
		for _, r := range results {
			if !r.Verify() {
				t.Errorf("%s: evidence does not match its fields", r.Probe)
			}
			if r.Decision != tc.want {
				t.Errorf("pids %+v %s: decision %s (%s), want %s", tc.pids, r.Probe, r.Decision, r.Detail, tc.want)
			}
			b, _ := json.Marshal(r)
			buf.Write(append(b, '\n'))
		}
		golden(t, filepath.Join("verify", "pid"+itoaT(tc.pids.Agent)+".jsonl"), buf.Bytes())
	}
}

func itoaT(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestVerifyHostUnknownWithoutHostState(t *testing.T) {
	r := VerifyHost("testdata/proc", SandboxPIDs{Init: 4241, Agent: 4242}, HostState{})
	for _, res := range r {
		if res.Probe == "host-namespaces" && res.Decision != Unknown {
			t.Errorf("namespaces without host state: %s, want UNKNOWN", res.Decision)
		}
	}
	r = VerifyHost("testdata/proc", SandboxPIDs{Init: 9999, Agent: 9999}, fixtureHost(t))
	for _, res := range r {
		if res.Decision != Unknown {
			t.Errorf("missing pid %s: %s, want UNKNOWN", res.Probe, res.Decision)
		}
	}
}

// The init's own capabilities are not the agent's: only the agent's pid
// decides host-capabilities, and an agent that kept any set fails it.
func TestVerifyHostReadsTheAgent(t *testing.T) {
	for _, tc := range []struct {
		pids          SandboxPIDs
		caps, initUID Decision
	}{
		{SandboxPIDs{Init: 4241, Agent: 4242}, Deny, Deny},
		{SandboxPIDs{Init: 4242, Agent: 4241}, Allow, Deny},
		{SandboxPIDs{Init: 4242, Agent: 4242}, Deny, Allow},
	} {
		for _, r := range VerifyHost("testdata/proc", tc.pids, fixtureHost(t)) {
			if (r.Probe == "host-capabilities" && r.Decision != tc.caps) || (r.Probe == "host-init-uid-separate" && r.Decision != tc.initUID) {
				t.Errorf("pids %+v: %s %s %s", tc.pids, r.Probe, r.Decision, r.Observed)
			}
		}
	}
}

func TestDecideInitUID(t *testing.T) {
	for _, tc := range []struct {
		init, agent []string
		want        Decision
		observed    string
	}{
		{[]string{"0", "0", "0", "0"}, []string{"1000", "1000", "1000", "1000"}, Deny, "separate"},
		{[]string{"0", "0", "0", "0"}, []string{"1000", "1000", "0", "1000"}, Allow, "shared:0"},
		{[]string{"1000", "0", "0", "0"}, []string{"1000", "1000", "1000", "1000"}, Allow, "shared:1000"},
	} {
		if d, o := decideInitUID(tc.init, tc.agent); d != tc.want || o != tc.observed {
			t.Errorf("init %v agent %v: %s %s, want %s %s", tc.init, tc.agent, d, o, tc.want, tc.observed)
		}
	}
}

func TestHostPID(t *testing.T) {
	if pid, err := HostPID("testdata/proc", 4241, 2); err != nil || pid != 4242 {
		t.Errorf("HostPID(4241, 2) = %d, %v; want 4242", pid, err)
	}
	if pid, err := HostPID("testdata/proc", 4241, 3); err == nil {
		t.Errorf("HostPID(4241, 3) = %d, want an error: no such child", pid)
	}
	if pid, err := HostPID("testdata/proc", 1, 2); err == nil {
		t.Errorf("HostPID(1, 2) = %d, want an error: 4242 is not pid 1's child", pid)
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
		// Entries the planner's list has and this check's own list lacked.
		{Mount{Dev: "8:2", Root: "/ana/.vault-token", Options: "ro"}, "/home/ana/.vault-token", "home-secret"},
		{Mount{Dev: "8:2", Root: "/ana/.claude", Options: "ro"}, "/home/ana/.claude", "home-secret"},
		{Mount{Dev: "8:2", Root: "/ana/.config/op", Options: "ro"}, "/home/ana/.config/op", "home-secret"},
		{Mount{Dev: "8:2", Root: "/ana/.config/nvim", Options: "ro"}, "/home/ana/.config/nvim", ""},
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
