package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAtLeast(t *testing.T) {
	for _, tc := range []struct {
		ver  string
		min  [3]int
		want bool
	}{
		{"1.1.5+ds1", [3]int{1, 2, 0}, false},
		{"1.2.0", [3]int{1, 2, 0}, true},
		{"1.2.0-rc.1", [3]int{1, 2, 0}, false},
		{"1.10.0", [3]int{1, 2, 0}, true},
		{"2.0", [3]int{1, 2, 0}, true},
		{"1.8.1", [3]int{1, 8, 1}, true},
		{"1.8", [3]int{1, 8, 1}, false},
		{"release-20240513.0", [3]int{1, 2, 0}, false},
	} {
		if got := atLeast(tc.ver, tc.min); got != tc.want {
			t.Errorf("atLeast(%q, %v) = %v, want %v", tc.ver, tc.min, got, tc.want)
		}
	}
}

// fakeRuntime is a runtime binary that prints version.
func fakeRuntime(t *testing.T, name, version string) Runtime {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+name+" version "+version+"'\necho 'spec: 1.0.2-dev'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Runtime{Name: name, Path: p}
}

// The grant method is "acl" but under runsc, whose Sentry evaluates no
// ACL ("chown"), and the reason says what the runtime could do, so that a
// record never claims idmapped mounts were weighed when they were not
// available.
func TestGrantMethod(t *testing.T) {
	for _, tc := range []struct {
		name, version, want string
	}{
		{"runc", "1.1.5+ds1", "runc 1.1.5+ds1 has no idmapped mounts (runc >= 1.2.0 has)"},
		{"runc", "1.2.3", "runc 1.2.3 supports idmapped mounts, but"},
		{"crun", "1.8.1", "crun 1.8.1 supports idmapped mounts, but"},
		{"crun", "1.7.2", "crun 1.7.2 has no idmapped mounts"},
		{"runsc", "release-20240513.0", "evaluates no POSIX ACL"},
	} {
		method, reason := fakeRuntime(t, tc.name, tc.version).GrantMethod(context.Background())
		want := GrantACL
		if tc.name == "runsc" {
			want = GrantChown
		}
		if method != want || !strings.Contains(reason, tc.want) {
			t.Errorf("%s %s: %s, %q; want %s and %q", tc.name, tc.version, method, reason, want, tc.want)
		}
	}
}

// A version the caller read already (Runtime.Version) is the one the
// reason names, and the binary is not run for it: the fake here fails if
// it runs. Without one, the binary is run.
func TestGrantMethodKnownVersion(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	p := filepath.Join(dir, "runc")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+ran+"\necho 'runc version 1.2.3'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := Runtime{Name: "runc", Path: p, Version: "1.1.5+ds1"}
	method, reason := r.GrantMethod(context.Background())
	if method != GrantACL || !strings.Contains(reason, "runc 1.1.5+ds1 has no idmapped mounts") {
		t.Errorf("with the version known: %s, %q", method, reason)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the runtime was run although its version was known")
	}
	r.Version = ""
	_, reason = r.GrantMethod(context.Background())
	if !strings.Contains(reason, "runc 1.2.3 supports idmapped mounts") {
		t.Errorf("without a known version: %q", reason)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Error("the runtime was not run for a version nobody read")
	}
}
