package containerd

import (
	"os"
	"testing"
)

func TestStatParent(t *testing.T) {
	for line, want := range map[string]int{
		"4242 (containerd-shim) S 17 4242 4242 0 -1": 17,
		"4242 (a) b) (c) S 99 1 1 0":                 99, // a command name with ") " in it
		"4242 (x) S":                                 0,
		"garbage":                                    0,
		"4242 (x) S notanumber 1":                    0,
	} {
		if got := statParent([]byte(line)); got != want {
			t.Errorf("statParent(%q) = %d, want %d", line, got, want)
		}
	}
	if got := parentOf(os.Getpid()); got != os.Getppid() {
		t.Errorf("parentOf(self) = %d, want %d", got, os.Getppid())
	}
	if got := parentOf(0); got != 0 {
		t.Errorf("parentOf(0) = %d", got)
	}
}
