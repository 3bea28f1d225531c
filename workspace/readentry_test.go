package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ReadEntry reads a regular file and refuses what an agent could plant in
// its place: a symlink (to a file or as the directory), a FIFO (without
// blocking), a file past max (cut).
func TestReadEntryRefusesWhatAnAgentPlants(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok"), []byte("token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadEntry(dir, "ok", 64); err != nil || string(b) != "token\n" {
		t.Fatalf("a regular file: %q, %v", b, err)
	}
	if b, err := ReadEntry(dir, "ok", 3); err != nil || string(b) != "tok" {
		t.Errorf("cut at max: %q, %v", b, err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadEntry(dir, "link", 64); err == nil {
		t.Errorf("a symlink was followed: %q", b)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEntry(dir, "fifo", 64); err == nil {
		t.Error("a FIFO was read")
	}
	linkDir := filepath.Join(t.TempDir(), "dirlink")
	if err := os.Symlink(dir, linkDir); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEntry(linkDir, "ok", 64); err == nil {
		t.Error("a symlinked directory was followed")
	}
}
