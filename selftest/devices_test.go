//go:build linux

package selftest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestDevicesBeyondStatsEveryEntry: a runtime in a user namespace binds
// each device over an empty regular file, which readdir reports as a
// regular file; only stat shows the device, so every entry is stat'ed.
func TestDevicesBeyondStatsEveryEntry(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pts"), 0o755); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]unix.Stat_t{
		"null":       {Mode: unix.S_IFCHR | 0o666, Rdev: unix.Mkdev(1, 3)},
		"kmsg":       {Mode: unix.S_IFCHR | 0o644, Rdev: unix.Mkdev(1, 11)},
		"loop0":      {Mode: unix.S_IFBLK | 0o660, Rdev: unix.Mkdev(1, 3)},
		"pts/0":      {Mode: unix.S_IFCHR | 0o620, Rdev: unix.Mkdev(136, 0)},
		"kvm":        {Mode: unix.S_IFCHR | 0o660, Rdev: unix.Mkdev(10, 232)},
		"notes":      {Mode: unix.S_IFREG | 0o644},
		"stdin-link": {Mode: unix.S_IFLNK | 0o777},
	}
	for name := range nodes {
		// Regular files on disk, as readdir sees a runtime's mount points.
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lstat := func(p string, st *unix.Stat_t) error {
		rel, _ := filepath.Rel(dir, p)
		n, ok := nodes[rel]
		if !ok {
			return unix.ENOENT
		}
		*st = n
		return nil
	}
	got, err := devicesBeyond(dir, lstat, []string{filepath.Join(dir, "kvm")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "kmsg"), filepath.Join(dir, "loop0")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("devicesBeyond (-want +got):\n%s", diff)
	}
}
