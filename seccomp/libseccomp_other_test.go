//go:build !(cgo && linux)

package seccomp

import (
	"errors"
	"runtime"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// On Linux, a build without cgo leaves out the libseccomp tests of this
// package (the equivalence with libseccomp, Validate); say so, so that
// strict mode fails instead of passing on tests that never ran.
func TestCgoTestsRan(t *testing.T) {
	if runtime.GOOS == "linux" {
		testutil.Skip(t, "built without cgo: the libseccomp tests of this package (Validate, the equivalence of Compile with libseccomp) did not run (install gcc and libseccomp-dev and keep CGO_ENABLED=1)")
	}
}

func TestWithoutLibseccompCallsSayNotSupported(t *testing.T) {
	p := profiles.Default().OCI(profiles.Arches()[0])
	if err := Validate(p); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Validate = %v, want ErrNotSupported", err)
	}
	if _, err := CompileLibseccomp(p); !errors.Is(err, ErrNotSupported) {
		t.Errorf("CompileLibseccomp = %v, want ErrNotSupported", err)
	}
	if _, err := Compile(p); err != nil {
		t.Errorf("Compile needs no libseccomp, yet: %v", err)
	}
	if _, err := LibseccompVersion(); !errors.Is(err, ErrNotSupported) {
		t.Errorf("LibseccompVersion = %v, want ErrNotSupported", err)
	}
}
