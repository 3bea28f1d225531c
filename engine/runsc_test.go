package engine

import (
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
