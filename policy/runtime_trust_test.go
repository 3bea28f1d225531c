package policy

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// A runtime is executed by root: one the agent (or another user) could have
// written must be refused, however it was named.
func TestResolveRefusesUntrustedRuntime(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeFS)
		given string
		want  string
	}{
		{"inside the workspace", func(f *fakeFS) {
			f.dir("/srv/proj/.cache", 0, 0)
			f.file("/srv/proj/.cache/runc", 0o755, 0)
		}, "/srv/proj/.cache/runc", "inside the workspace"},
		{"a link into the workspace", func(f *fakeFS) {
			f.file("/srv/proj/runc", 0o755, 0)
			f.link("/usr/local/runc", "/srv/proj/runc")
			f.dir("/usr/local", 0, 0)
		}, "/usr/local/runc", "inside the workspace"},
		{"owned by another user", func(f *fakeFS) {
			f.dir("/opt", 0, 0)
			f.file("/opt/runc", 0o755, 1000)
		}, "/opt/runc", "owned by uid 1000"},
		{"in a world-writable directory", func(f *fakeFS) {
			f.files["/var/tmp"] = FileInfo{Mode: fs.ModeDir | fs.ModeSticky | 0o777, UID: 0}
			f.file("/var/tmp/runc", 0o755, 0)
		}, "/var/tmp/runc", "writable by group or others"},
		{"found on a PATH into the workspace", func(f *fakeFS) {
			f.file("/srv/proj/bin-runc", 0o755, 0)
			f.path["runc"] = "/srv/proj/bin-runc"
		}, "", "inside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeFS()
			h := testHost(f)
			f.dir("/srv/proj", 0, 0)
			tt.setup(f)
			_, err := Resolve(Policy{Runtime: tt.given}, []string{"sh"}, h, Run{ID: "x", Bundle: "/run/agentbox/x/bundle"})
			var in *InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want an input error containing %q", err, tt.want)
			}
		})
	}
}

func TestResolveAcceptsRootOwnedRuntime(t *testing.T) {
	f := newFakeFS()
	h := testHost(f)
	f.dir("/srv/proj", 0, 0)
	f.dir("/opt", 0, 0)
	f.file("/opt/runc", 0o755, 0)
	plan, err := Resolve(Policy{Runtime: "/opt/runc"}, []string{"sh"}, h, Run{ID: "x", Bundle: "/run/agentbox/x/bundle"})
	if err != nil || plan.Runtime.Path != "/opt/runc" {
		t.Fatalf("plan %+v, err %v", plan, err)
	}
}
