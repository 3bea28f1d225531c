package compose

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testFiles() []File {
	return []File{
		{Name: "compose.yaml", Data: []byte("services: {}\n"), Mode: 0o600},
		{Name: "sub/file", Data: []byte("x"), Mode: 0o644},
		{Name: "secrets/key", Mode: 0o600, Secret: true, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())},
	}
}

func TestWriteFresh(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	res, err := Write(dir, testFiles(), false)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(WriteResult{Written: []string{"compose.yaml", "sub/file", "secrets/key"}}, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	for _, f := range testFiles() {
		fi, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil || fi.Mode().Perm() != f.Mode {
			t.Errorf("%s: %v %v", f.Name, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "secrets")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("secrets dir: %v %v", fi.Mode(), err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*", ".*.tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestWriteConflict: one differing file stops the whole write, force
// replaces it, and a secret file (the user's key) is never touched.
func TestWriteConflict(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, testFiles(), false); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "secrets", "key")
	if err := os.WriteFile(key, []byte("the user's real key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := testFiles()
	files[0].Data = []byte("services: {changed: {}}\n")
	files = append(files, File{Name: "new", Data: []byte("n"), Mode: 0o644})
	_, err := Write(dir, files, false)
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Files, []string{"compose.yaml"}) {
		t.Fatalf("err = %v, want a conflict on compose.yaml", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused write created another file: %v", err)
	}
	res, err := Write(dir, files, true)
	if err != nil {
		t.Fatal(err)
	}
	want := WriteResult{Written: []string{"compose.yaml", "new"}, Unchanged: []string{"sub/file"}, Kept: []string{"secrets/key"}}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if b, _ := os.ReadFile(key); string(b) != "the user's real key\n" {
		t.Errorf("the key file was replaced: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "compose.yaml")); string(b) != "services: {changed: {}}\n" {
		t.Errorf("force did not replace compose.yaml: %q", b)
	}
}

func TestWriteModeChangeIsAConflict(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, testFiles(), false); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "compose.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *ConflictError
	if _, err := Write(dir, testFiles(), false); !errors.As(err, &ce) {
		t.Errorf("a world-readable compose.yaml was accepted as unchanged: %v", err)
	}
}

func TestWriteRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "compose.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, testFiles(), true); err == nil {
		t.Error("wrote through a symlink")
	}
	if target, _ := os.Readlink(filepath.Join(dir, "compose.yaml")); target != "/etc/passwd" {
		t.Errorf("the symlink was replaced: %q", target)
	}
}
