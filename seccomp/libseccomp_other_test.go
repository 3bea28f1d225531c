//go:build !(cgo && linux)

package seccomp

import (
	"errors"
	"testing"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

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
