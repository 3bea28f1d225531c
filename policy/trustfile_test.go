package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agentbox trust's procedure: a first trust shows the file, a second
// changes nothing, a changed file with the reviewed digest is refused, a
// file that would not load is never trusted, and a missing one says so.
func TestTrustFile(t *testing.T) {
	ws, cfg := t.TempDir(), t.TempDir()
	store := Sources{ConfigDir: cfg}.Store()
	path := filepath.Join(ws, FileName)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var in *InputError
	if _, err := store.TrustFile(path, "", time.Now()); !errors.As(err, &in) || !strings.Contains(err.Error(), "does not exist; there is nothing to trust") {
		t.Errorf("missing file: %v", err)
	}
	write("env:\n  allow: [GOFLAGS]\n")
	st, err := store.TrustFile(path, "", time.Now())
	if err != nil || st.Action != "trusted" || !st.Trusted || st.Changed || !strings.Contains(st.Text(), "  env:") {
		t.Fatalf("first trust: %+v %v\n%s", st, err, st.Text())
	}
	reviewed := st.Digest
	if st, err = store.TrustFile(path, reviewed, time.Now()); err != nil || st.Action != "unchanged" || st.Text() != path+" is trusted ("+reviewed+")" {
		t.Errorf("second trust: %+v %v", st, err)
	}
	write("env:\n  allow: [GOFLAGS, AWS_SECRET_ACCESS_KEY]\n")
	var changed *ChangedError
	if _, err := store.TrustFile(path, reviewed, time.Now()); !errors.As(err, &changed) || changed.Reviewed != reviewed {
		t.Errorf("changed since reviewed: %v", err)
	}
	if st, _, err := store.Status(path); err != nil || st.Trusted || !st.Changed || !strings.Contains(st.Diff, "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("status of the changed file: %+v %v", st, err)
	}
	write("limits:\n  swapp: 1\n")
	if _, err := store.TrustFile(path, "", time.Now()); !errors.As(err, &in) || !strings.Contains(err.Error(), "nothing was trusted: fix the file first") {
		t.Errorf("a file that would not load: %v", err)
	}
	if st, _, _ := store.Status(path); st.Trusted {
		t.Error("a file that would not load was trusted")
	}
}

// The target is FILE, DIR's agentbox.yaml or the working directory's,
// with the directory's symlinks resolved.
func TestTrustTarget(t *testing.T) {
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cwd, target, want string }{
		{dir, "", filepath.Join(real, FileName)},
		{"/", dir, filepath.Join(real, FileName)},
		{dir, "other.yaml", filepath.Join(real, "other.yaml")},
		{"/", filepath.Join(link, "p.yaml"), filepath.Join(real, "p.yaml")},
	} {
		if got, err := TrustTarget(tc.cwd, tc.target); err != nil || got != tc.want {
			t.Errorf("TrustTarget(%q, %q) = %q, %v; want %q", tc.cwd, tc.target, got, err, tc.want)
		}
	}
	var in *InputError
	if _, err := TrustTarget("/", "/nonexistent-dir/agentbox.yaml"); !errors.As(err, &in) {
		t.Errorf("missing directory: %v, want an InputError", err)
	}
}
