package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunscPassesFiles(t *testing.T) {
	debian := `run [flags] <container id> - create and run a secure container.
  -bundle string
    	path to the root of the bundle directory, defaults to the current directory
  -console-socket string
    	path to an AF_UNIX socket which will receive a file descriptor referencing the master end of the console's pseudoterminal
  -detach
    	detach from the container's process
  -pid-file string
    	filename that the container pid will be written to
`
	for _, tc := range []struct {
		name, help string
		want       bool
	}{
		{"debian 0.0~20221219", debian, false},
		{"with the flag", debian + "  -pass-fd value\n    \tfile descriptor passed to the container in M:N format\n", true},
		{"double dash with a value", "--pass-fd=3:3", true},
		{"the word without a dash is no flag", "see pass-fd in runsc", false},
		{"double dash alone", "--pass-fd", true},
		{"a description that names it is not the flag", "  -x\n    \tlike runsc's pass-fd-ish", false},
		{"runc's flag is not runsc's", "  -preserve-fds int", false},
		{"empty", "", false},
	} {
		if got := RunscPassesFiles(tc.help); got != tc.want {
			t.Errorf("%s: RunscPassesFiles = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRunscRefusalSaysWhyAndTheFix(t *testing.T) {
	msg := RunscRefusal("/usr/bin/runsc", "0.0~20221219.0").Error()
	for _, want := range []string{"runsc 0.0~20221219.0 at /usr/bin/runsc", "no --pass-fd", "fd 3", "--runtime runc"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	if !strings.Contains(RunscRefusal("/x", "").Error(), "(version unknown)") {
		t.Error("an unknown version is not said")
	}
}

func TestRunscGetsItsFilesWithPassFd(t *testing.T) {
	rs := Runtime{Name: "runsc"}
	got, err := rs.passFiles("run", 2)
	if err != nil || strings.Join(got, " ") != "--pass-fd=3:3 --pass-fd=4:4" {
		t.Errorf("runsc run, 2 files: %q, %v", got, err)
	}
	if _, err := rs.passFiles("create", 1); err == nil {
		t.Error("runsc create passes files: want an error (only run has --pass-fd)")
	}
	if got, _ := (Runtime{Name: "runc"}).passFiles("create", 1); strings.Join(got, " ") != "--preserve-fds 1" {
		t.Errorf("runc: %q", got)
	}
	if f := (Runtime{Name: "runsc"}).sandboxFlags(); strings.Join(f, " ") != "--network=none --host-uds=none --gofer-network-namespace=new" {
		t.Errorf("runsc launch flags %q", f)
	}
	if f := (Runtime{Name: "crun"}).sandboxFlags(); f != nil {
		t.Errorf("crun launch flags %q, want none", f)
	}
}

// runsc keeps a run's state as files in its root, no directory: the
// teardown's proof finds each one left, and nothing once they are gone
// (runsc's shared null-netns is not the run's).
func TestRunscStateLeft(t *testing.T) {
	root := t.TempDir()
	r := Runtime{Name: "runsc", Path: filepath.Join(root, "no-runsc"), Root: root}
	id := "20261201T000000.000Z-0123abcd"
	if err := os.WriteFile(filepath.Join(root, "null-netns"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if left := r.stateLeft(context.Background(), id); left != nil {
		t.Errorf("nothing of %s in the root, yet left: %q", id, left)
	}
	files := RunscStateFiles(root, id)
	for _, p := range files {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	left := r.stateLeft(context.Background(), id)
	if len(left) != len(files) {
		t.Fatalf("left %q, want each of %q", left, files)
	}
	for i, p := range files {
		if !strings.Contains(left[i], p) {
			t.Errorf("left[%d] = %q, want %s", i, left[i], p)
		}
	}
}
