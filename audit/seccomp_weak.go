package audit

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp"
)

// SeccompWeak compares a profile with agentbox's: it returns the syscalls
// agentbox denies that p lets through (outright or for some arguments), and
// whether the comparison was made.
func SeccompWeak(p *specs.LinuxSeccomp) ([]string, bool) {
	if p == nil {
		return nil, false
	}
	return seccomp.Weaknesses(p), true
}

// parseSeccomp reads a Docker, Podman or OCI seccomp profile given inline
// (what the docker CLI sends and inspect shows), resolving Docker's
// conditional rules for a container holding caps.
func parseSeccomp(b []byte, caps []string) (*specs.LinuxSeccomp, error) {
	return seccomp.Parse("inline profile", b, seccomp.Target{Caps: caps})
}

// LoadSeccompFile reads a profile file the way parseSeccomp reads an
// inline one (the manifest loader reads Localhost profiles with it).
func LoadSeccompFile(path string, caps []string) (*specs.LinuxSeccomp, error) {
	return seccomp.LoadFileFor(path, seccomp.Target{Caps: caps})
}
