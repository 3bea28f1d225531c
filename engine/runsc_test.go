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
		{"with the flag", debian + "  -preserve-fds int\n    \tnumber of extra fds\n", true},
		{"double dash with a value", "--preserve-fds=N", true},
		{"the word without a dash is no flag", "see preserve-fds in runc", false},
		{"double dash alone", "--preserve-fds", true},
		{"a description that names it is not the flag", "  -x\n    \tlike runc's preserve-fds-ish", false},
		{"empty", "", false},
	} {
		if got := RunscPassesFiles(tc.help); got != tc.want {
			t.Errorf("%s: RunscPassesFiles = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRunscRefusalSaysWhyAndTheFix(t *testing.T) {
	msg := RunscRefusal("/usr/bin/runsc", "0.0~20221219.0").Error()
	for _, want := range []string{"runsc 0.0~20221219.0 at /usr/bin/runsc", "no --preserve-fds", "fd 3", "--runtime runc"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	if !strings.Contains(RunscRefusal("/x", "").Error(), "(version unknown)") {
		t.Error("an unknown version is not said")
	}
}
