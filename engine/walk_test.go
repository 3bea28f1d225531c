//go:build linux

package engine

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func writeFile(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// mkdirChain makes depth nested directories named by name(i) under dir,
// each also holding a file, through fds: the path is longer than
// PATH_MAX. It returns the number of inodes made.
func mkdirChain(t *testing.T, dir string, depth int, name func(int) string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range depth {
		f, err := unix.Openat(fd, "file", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(f)
		if err := unix.Mkdirat(fd, name(i), 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name(i), unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)
	return 2 * depth
}

func longName(i int) string { return fmt.Sprintf("%03d", i) + strings.Repeat("n", 197) }

// Deeper than its fd budget, the walk closes directories and reopens them
// on the way back; it still visits every inode exactly once.
func TestWalkBeyondItsFDBudget(t *testing.T) {
	ws := t.TempDir()
	made := mkdirChain(t, ws, 30, func(i int) string { return fmt.Sprintf("d%d", i) })
	// Siblings after the subdirectory in each directory, so that reading
	// resumes after a reopen.
	fd, _ := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	for i := range 30 {
		for j := range 5 {
			f, err := unix.Openat(fd, fmt.Sprintf("s%d", j), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(f)
			made++
		}
		next, _ := unix.Openat(fd, fmt.Sprintf("d%d", i), unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		fd = next
	}
	unix.Close(fd)
	root, st, err := openWalkRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	seen := map[uint64]int{}
	w := &walker{openFiles: true, maxOpen: 3, visit: func(n *node) error { seen[n.st.Ino]++; return nil }}
	w.run(root, st)
	if err := w.err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != made+1 {
		t.Errorf("visited %d inodes, want %d", len(seen), made+1)
	}
	for ino, n := range seen {
		if n != 1 {
			t.Errorf("inode %d visited %d times", ino, n)
		}
	}
}

func inTime(t *testing.T, d time.Duration, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s hangs (more than %v)", what, d)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            "plain",
		"new\nline":        `new\x0aline`,
		"\x1b]52;c;AA\x07": `\x1b]52;c;AA\x07`,
		"back\\slash":      `back\\slash`,
		"bad\xffutf8":      `bad\xffutf8`,
		"c1\u009bcsi":      `c1\x9bcsi`,
		"ünïcode":          "ünïcode",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// A directory moved out of its parent while the walk is inside it, past
// the fd budget: its ".." is no longer the parent, so the walk reopens the
// parent from the root by name, checked step by step, and goes on.
func TestWalkReopensFromTheRootWhenMoved(t *testing.T) {
	ws := t.TempDir()
	const depth = 10
	mkdirChain(t, ws, depth, func(i int) string { return fmt.Sprintf("d%d", i) })
	root, st, err := openWalkRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	// d0/…/d8, moved to the root while the walk is in it (at d9).
	parts := make([]string, depth-1)
	for i := range parts {
		parts[i] = fmt.Sprintf("d%d", i)
	}
	deepest := strings.Join(parts, "/")
	files := map[uint64]bool{}
	moved := false
	w := &walker{openFiles: true, maxOpen: 3, visit: func(n *node) error {
		if n.name == "file" {
			files[n.st.Ino] = true
		}
		if n.name == "d9" && !moved {
			moved = true
			return unix.Renameat(root, deepest, root, "moved")
		}
		return nil
	}}
	w.run(root, st)
	if err := w.err(); err != nil {
		t.Fatal(err)
	}
	if !moved {
		t.Fatal("never reached the deepest directory")
	}
	if len(files) < depth {
		t.Errorf("visited %d of the %d files above the moved directory", len(files), depth)
	}
}
