package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func loadSpec(t *testing.T) *specs.Spec {
	t.Helper()
	// `agentbox spec -- /usr/bin/true` with its seccomp rules cut to two, the
	// workspace and init paths made neutral, and the loopback hook that
	// earlier specs had, so that removing hooks stays tested.
	data, err := os.ReadFile("testdata/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// TestBaselineSpecChangesOnlyAgentboxParts: the baseline differs from
// agentbox's spec in the process, the init bind, the hooks and the cgroup,
// and in nothing else.
func TestBaselineSpecChangesOnlyAgentboxParts(t *testing.T) {
	orig := loadSpec(t)
	got, created, changes, err := baselineSpec(orig, []string{"/usr/bin/true"}, "/agentbox-bench/b1", "/bench/standins")
	if err != nil {
		t.Fatal(err)
	}
	want := loadSpec(t)
	want.Process.Args = []string{"/usr/bin/true"}
	want.Hooks = nil
	want.Linux.CgroupsPath = "/agentbox-bench/b1"
	var mounts []specs.Mount
	for _, m := range want.Mounts {
		if m.Destination == "/run/agentbox/gateway.sock" {
			m.Source = "/bench/standins/gateway.sock"
		}
		if m.Destination != "/.agentbox/init" {
			mounts = append(mounts, m)
		}
	}
	want.Mounts = mounts
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("baseline spec (-want +got):\n%s", d)
	}
	if len(got.Mounts) != len(orig.Mounts)-1 {
		t.Errorf("%d mounts, want %d", len(got.Mounts), len(orig.Mounts)-1)
	}
	if d := cmp.Diff(loadSpec(t), orig); d != "" {
		t.Errorf("baselineSpec changed its input (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"/bench/standins/gateway.sock"}, created); d != "" {
		t.Errorf("stand-ins (-want +got):\n%s", d)
	}
	wantChanges := []string{
		`process ["/usr/bin/true"] instead of ["/.agentbox/init"]`,
		"no bind of /opt/agentbox/bin/agentbox-init at /.agentbox/init",
		"/run/agentbox/gateway.sock bound from an empty stand-in file instead of /run/agentbox/runs/RUN_ID/gateway/gateway.sock",
		"no hooks",
		"cgroup /agentbox-bench/b1 instead of /agentbox/RUN_ID",
	}
	if d := cmp.Diff(wantChanges, changes); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
}

func TestBaselineSpecRefusesIncompleteSpecs(t *testing.T) {
	for name, s := range map[string]*specs.Spec{
		"nil":        nil,
		"no process": {Root: &specs.Root{Path: "rootfs"}, Linux: &specs.Linux{}},
		"no args":    {Process: &specs.Process{}, Root: &specs.Root{Path: "rootfs"}, Linux: &specs.Linux{}},
		"no linux":   {Process: &specs.Process{Args: []string{"/init"}}, Root: &specs.Root{Path: "rootfs"}},
		"no root":    {Process: &specs.Process{Args: []string{"/init"}}, Linux: &specs.Linux{}},
	} {
		if _, _, _, err := baselineSpec(s, []string{"/usr/bin/true"}, "/x", "/s"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
