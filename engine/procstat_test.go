package engine

import (
	"os"
	"testing"
)

func TestStatFields(t *testing.T) {
	for line, want := range map[string]string{
		"4242 (containerd-shim) S 17 4242 4242 0 -1": "S 17",
		"4242 (a) b) (c) S 99 1 1 0":                 "S 99", // a command name with ") " in it
		"4242 (x) S":                                 "S",
	} {
		f, err := statFields([]byte(line))
		if err != nil {
			t.Errorf("statFields(%q): %v", line, err)
			continue
		}
		got := string(f[0])
		if len(f) > 1 {
			got += " " + string(f[1])
		}
		if got != want {
			t.Errorf("statFields(%q) starts %q, want %q", line, got, want)
		}
	}
	for _, bad := range []string{"garbage", "4242 (x)", "4242 (x) "} {
		if _, err := statFields([]byte(bad)); err == nil {
			t.Errorf("statFields(%q) gave no error", bad)
		}
	}
}

func TestParentPid(t *testing.T) {
	if got := ParentPid(os.Getpid()); got != os.Getppid() {
		t.Errorf("ParentPid(self) = %d, want %d", got, os.Getppid())
	}
	if got := ParentPid(0); got != 0 {
		t.Errorf("ParentPid(0) = %d", got)
	}
	start, zombie, err := processStart(os.Getpid())
	if err != nil || start == 0 || zombie {
		t.Errorf("processStart(self) = %d, %v, %v", start, zombie, err)
	}
}
