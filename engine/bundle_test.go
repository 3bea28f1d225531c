package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/internal/nsexec"
	"github.com/agentbox/agentbox/policy"
)

func TestWriteBundle(t *testing.T) {
	dir := t.TempDir()
	src := t.TempDir()
	file := filepath.Join(src, "init")
	if err := os.WriteFile(file, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &specs.Spec{Root: &specs.Root{Path: "rootfs", Readonly: true}, Mounts: []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/usr", Type: "bind", Source: src, Options: []string{"bind", "ro"}},
		{Destination: "/usr/lib/x", Type: "bind", Source: src},       // below another mount: not created
		{Destination: "/.agentbox/init", Type: "bind", Source: file}, // a file mount point
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"mode=1777"}},
		{Destination: "/home/agent", Type: "tmpfs", Source: "tmpfs", Options: []string{"mode=0700"}},
	}}
	rootfs := policy.Rootfs{Symlinks: map[string]string{"/bin": "usr/bin"}, Files: map[string]string{"/etc/hosts": "127.0.0.1 localhost\n"}}
	if err := WriteBundle(dir, s, rootfs); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "rootfs")
	checks := []struct {
		path string
		mode os.FileMode
	}{
		{"proc", os.ModeDir | 0o755},
		{"usr", os.ModeDir | 0o755},
		{".agentbox/init", 0o644},
		{"tmp", os.ModeDir | os.ModeSticky | 0o777}, // runc gives a tmpfs its mount point's mode
		{"home/agent", os.ModeDir | 0o700},
		{"etc/hosts", 0o644},
	}
	for _, c := range checks {
		fi, err := os.Lstat(filepath.Join(root, c.path))
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "usr/lib")); err == nil {
		t.Error("a mount point below another bind was created in the bundle root")
	}
	if l, err := os.Readlink(filepath.Join(root, "bin")); err != nil || l != "usr/bin" {
		t.Errorf("bin -> %q, %v", l, err)
	}
	var back specs.Spec
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil || json.Unmarshal(data, &back) != nil || len(back.Mounts) != len(s.Mounts)-1 {
		t.Fatalf("config.json: %v, %d mounts, want all but the nested one", err, len(back.Mounts))
	}
	if back.Mounts[1].Destination != "/usr" || back.Mounts[1].Options[0] != "rbind" {
		t.Errorf("the parent of a nested bind: %+v, want it bound recursively", back.Mounts[1])
	}
	if s.Mounts[1].Options[0] != "bind" || len(s.Mounts) != 6 {
		t.Error("WriteBundle changed the spec it was given")
	}
	c, err := nsexec.ReadComposition(filepath.Join(dir, ComposeFile))
	want := &nsexec.Composition{Parents: []nsexec.Parent{{Source: src, Mounts: []nsexec.Nested{{Source: src, Target: "lib/x"}}}}}
	if err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("composition %+v, %v; want %+v", c, err, want)
	}
}

func TestSplitNested(t *testing.T) {
	ws := "/srv/proj"
	bind := func(src, dst string, opts ...string) specs.Mount {
		return specs.Mount{Type: "bind", Source: src, Destination: dst, Options: append([]string{"bind", "nosuid", "nodev"}, opts...)}
	}
	s := &specs.Spec{Mounts: []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		bind(ws, ws, "rw"),
		bind(ws+"/.git/config", ws+"/.git/config", "ro"),
		bind(ws+"/sub", ws+"/sub", "rw"),
		bind("/run/b/socket-cover", ws+"/sub/nvim.sock", "ro"),
		{Destination: ws + "/t", Type: "tmpfs", Source: "tmpfs"},
		bind("/usr", "/usr", "ro"),
		bind(ws+"2", ws+"2", "rw"), // a sibling, not below the workspace
	}}
	rs, c := splitNested(s)
	var dests []string
	for _, m := range rs.Mounts {
		dests = append(dests, m.Destination)
	}
	if got, want := strings.Join(dests, " "), "/proc /srv/proj /srv/proj/t /usr /srv/proj2"; got != want {
		t.Errorf("runtime mounts %q, want %q", got, want)
	}
	if rs.Mounts[1].Options[0] != "rbind" || rs.Mounts[3].Options[0] != "bind" {
		t.Errorf("only the parent is recursive: %+v", rs.Mounts)
	}
	want := &nsexec.Composition{Parents: []nsexec.Parent{{Source: ws, Mounts: []nsexec.Nested{
		{Source: ws + "/.git/config", Beneath: ".git/config", Target: ".git/config", ReadOnly: true},
		{Source: ws + "/sub", Beneath: "sub", Target: "sub"},
		{Source: "/run/b/socket-cover", Target: "sub/nvim.sock", ReadOnly: true},
	}}}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("composition\n got %+v\nwant %+v", c, want)
	}
	if rs, c := splitNested(&specs.Spec{Mounts: []specs.Mount{bind(ws, ws)}}); c != nil || len(rs.Mounts) != 1 {
		t.Errorf("no nested bind: %+v %+v", rs, c)
	}
}

// A symlink in the bundle root can never make agentbox create a directory
// outside it.
func TestMountPointsNeverFollowSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	s := &specs.Spec{Root: &specs.Root{Path: "rootfs"}, Mounts: []specs.Mount{{Destination: "/escape/x", Type: "tmpfs", Source: "tmpfs"}}}
	err := WriteBundle(dir, s, policy.Rootfs{Symlinks: map[string]string{"/escape": outside}})
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("WriteBundle = %v, want a refusal to follow the symlink", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("created %v outside the bundle", entries)
	}
}

func TestInRootCannotClimbOut(t *testing.T) {
	for _, p := range []string{"/../../etc/passwd", "../x", "/a/../../b"} {
		got, err := inRoot("/bundle/rootfs", p)
		if err != nil || !strings.HasPrefix(got, "/bundle/rootfs/") {
			t.Errorf("inRoot(%q) = %q, %v", p, got, err)
		}
	}
}

// An empty in-sandbox path names what it belongs to: the mount (by type
// and source), the symlink (by target) or the file.
func TestEmptyPathsSayWhose(t *testing.T) {
	tests := []struct {
		name   string
		mounts []specs.Mount
		rootfs policy.Rootfs
		want   string
	}{
		{"mount", []specs.Mount{{Type: "tmpfs", Source: "tmpfs", Options: []string{"mode=1777"}}}, policy.Rootfs{}, `the tmpfs mount of "tmpfs" has no destination`},
		{"bind", []specs.Mount{{Type: "bind", Source: "/srv/data"}}, policy.Rootfs{}, `the bind mount of "/srv/data" has no destination`},
		{"symlink", nil, policy.Rootfs{Symlinks: map[string]string{"": "usr/bin"}}, `symlink to "usr/bin"`},
		{"file", nil, policy.Rootfs{Files: map[string]string{"": "abc"}}, "synthesized file of 3 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &specs.Spec{Root: &specs.Root{Path: "rootfs"}, Mounts: tt.mounts}
			err := WriteBundle(t.TempDir(), s, tt.rootfs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("WriteBundle = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestWriteFileAtomicLeavesNoTemporaries(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meta.json")
	for _, content := range []string{"one", "two"} {
		if err := WriteFileAtomic(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %v, want only meta.json", entries)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q", b)
	}
}

// An image root gets its synthesized files beside the root, to be bound
// over the image's own.
func TestWriteBundleImageFiles(t *testing.T) {
	dir := t.TempDir()
	s := &specs.Spec{Root: &specs.Root{Path: "rootfs"}}
	rootfs := policy.Rootfs{Image: "/srv/img", Files: map[string]string{"/etc/passwd": "agent:x:1000:1000::/home/agent:/bin/sh\n"}}
	if err := WriteBundle(dir, s, rootfs); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, policy.FilesDir, "etc", "passwd")); err != nil || !strings.HasPrefix(string(b), "agent:") {
		t.Errorf("files/etc/passwd: %q, %v", b, err)
	}
}

// crun makes nested binds itself: its bundle keeps them in config.json
// and has no composition for the helper.
func TestWriteBundleForCrun(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	s := &specs.Spec{Root: &specs.Root{Path: "rootfs"}, Mounts: []specs.Mount{
		{Destination: "/w", Type: "bind", Source: src, Options: []string{"bind"}},
		{Destination: "/w/x", Type: "bind", Source: src, Options: []string{"bind", "ro"}},
	}}
	if err := (Runtime{Name: "crun"}).WriteBundle(dir, s, policy.Rootfs{}); err != nil {
		t.Fatal(err)
	}
	var back specs.Spec
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil || json.Unmarshal(data, &back) != nil || len(back.Mounts) != 2 || back.Mounts[0].Options[0] != "bind" {
		t.Errorf("crun's config.json: %+v, %v", back.Mounts, err)
	}
	if composition(dir) != "" {
		t.Error("a crun bundle has a composition")
	}
}
