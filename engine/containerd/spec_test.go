package containerd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestShimSpec(t *testing.T) {
	in := &specs.Spec{
		Root: &specs.Root{Path: "rootfs", Readonly: true},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs"},
			{Destination: "/work", Type: "bind", Source: "/home/u/work", Options: []string{"rbind", "rw"}},
			{Destination: "/run/cover", Source: "cover", Options: []string{"bind", "ro"}},
			{Destination: "/etc/x", Type: "none", Source: "files/x", Options: []string{"rbind"}},
		},
	}
	got, err := shimSpec(in, "/run/agentbox/runs/r1/bundle")
	if err != nil {
		t.Fatal(err)
	}
	want := &specs.Spec{
		Root: &specs.Root{Path: "/run/agentbox/runs/r1/bundle/rootfs", Readonly: true},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs"},
			{Destination: "/work", Type: "bind", Source: "/home/u/work", Options: []string{"rbind", "rw"}},
			{Destination: "/run/cover", Source: "/run/agentbox/runs/r1/bundle/cover", Options: []string{"bind", "ro"}},
			{Destination: "/etc/x", Type: "none", Source: "/run/agentbox/runs/r1/bundle/files/x", Options: []string{"rbind"}},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("shimSpec (-want +got):\n%s", d)
	}
	if in.Root.Path != "rootfs" || in.Mounts[3].Source != "cover" {
		t.Errorf("shimSpec changed its input: %+v", in)
	}
}

func TestShimSpecAbsoluteRootKept(t *testing.T) {
	got, err := shimSpec(&specs.Spec{Root: &specs.Root{Path: "/srv/root"}}, "/b")
	if err != nil {
		t.Fatal(err)
	}
	if got.Root.Path != "/srv/root" {
		t.Errorf("root = %q, want /srv/root", got.Root.Path)
	}
}

func TestShimSpecRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		s      *specs.Spec
		bundle string
	}{
		"no root":         {&specs.Spec{}, "/b"},
		"empty root":      {&specs.Spec{Root: &specs.Root{}}, "/b"},
		"relative bundle": {&specs.Spec{Root: &specs.Root{Path: "rootfs"}}, "b"},
	} {
		if _, err := shimSpec(tc.s, tc.bundle); err == nil {
			t.Errorf("%s: shimSpec accepted it", name)
		}
	}
}
