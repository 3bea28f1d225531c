//go:build !(cgo && linux)

package seccomp

import (
	"errors"
	"runtime"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// On Linux, a build without cgo leaves out the libseccomp and kernel
// tests of this package (they need cgo); say so, so that strict mode fails
// instead of passing on tests that never ran.
func TestCgoTestsRan(t *testing.T) {
	if runtime.GOOS == "linux" {
		testutil.Skip(t, "built without cgo: the libseccomp and kernel-enforcement tests of this package did not run (install gcc and libseccomp-dev and keep CGO_ENABLED=1)")
	}
}

func TestWithoutLibseccompCallsSayNotSupported(t *testing.T) {
	p := profiles.Default().OCI(profiles.Arches()[0])
	if err := Validate(p); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Validate = %v, want ErrNotSupported", err)
	}
	if _, err := Compile(p); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Compile = %v, want ErrNotSupported", err)
	}
	if _, err := LibseccompVersion(); !errors.Is(err, ErrNotSupported) {
		t.Errorf("LibseccompVersion = %v, want ErrNotSupported", err)
	}
}
