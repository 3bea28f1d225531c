//go:build linux

package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// RemoveTree deletes a run directory the sandbox could have written into
// without following its symlinks, at any depth, past FIFOs.
func TestRemoveTree(t *testing.T) {
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	writeFile(t, keep, 0o600)
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	mkdirChain(t, dir, 40, longName)
	if err := os.Symlink(outside, filepath.Join(dir, "to-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(keep, filepath.Join(dir, "to-file")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	inTime(t, 10*time.Second, "remove", func() error { return RemoveTree(dir) })
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists", dir)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file behind a symlink was removed: %v", err)
	}
	if err := RemoveTree(dir); err != nil {
		t.Errorf("removing what is gone: %v", err)
	}
}

// A symlink in place of the directory itself is removed, not followed.
func TestRemoveTreeOfASymlink(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "keep"), 0o600)
	link := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := RemoveTree(link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("removal followed the symlink: %v", err)
	}
}
