//go:build !(cgo && linux)

package seccomp

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// Validate needs libseccomp; this build has none.
func Validate(*specs.LinuxSeccomp) error { return ErrNotSupported }

// Compile needs libseccomp; this build has none.
func Compile(*specs.LinuxSeccomp) (Program, error) { return Program{}, ErrNotSupported }

// LibseccompVersion needs libseccomp; this build has none.
func LibseccompVersion() (profiles.Version, error) { return profiles.Version{}, ErrNotSupported }
