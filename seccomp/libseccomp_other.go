//go:build !(cgo && linux)

package seccomp

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// Validate needs libseccomp; this build has none.
func Validate(*specs.LinuxSeccomp) error { return ErrNotSupported }

// CompileLibseccomp needs libseccomp; this build has none. Compile, which
// does not, covers agentbox's architectures.
func CompileLibseccomp(*specs.LinuxSeccomp) (Program, error) { return Program{}, ErrNotSupported }

// LibseccompVersion needs libseccomp; this build has none.
func LibseccompVersion() (profiles.Version, error) { return profiles.Version{}, ErrNotSupported }
