package audit

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// A launcher's own read-only files under a system directory (the run's
// gateway socket) are exempt from system-directory-mounted when named
// exactly, and from nothing else.
func TestRuntimeFilesExemptOnlyTheSystemCheck(t *testing.T) {
	const sock = "/run/agentbox/runs/R/gateway/gateway.sock"
	spec := func(src string) *specs.Spec {
		return &specs.Spec{Mounts: []specs.Mount{{Destination: "/run/agentbox/gateway.sock", Type: "bind", Source: src, Options: []string{"bind", "ro"}}}}
	}
	codes := func(r Report) map[string]bool {
		m := map[string]bool{}
		for _, c := range r.Containers {
			for _, f := range c.Findings {
				m[f.Code] = true
			}
		}
		return m
	}
	if !codes(Spec(spec(sock), Options{}))[CodeSystemDirectory] {
		t.Error("without RuntimeFiles the bind under /run must be a finding")
	}
	if codes(Spec(spec(sock), Options{RuntimeFiles: []string{sock}}))[CodeSystemDirectory] {
		t.Error("the named runtime file is still reported")
	}
	if !codes(Spec(spec("/run/agentbox/runs/R/gateway"), Options{RuntimeFiles: []string{sock}}))[CodeSystemDirectory] {
		t.Error("RuntimeFiles exempted its parent directory")
	}
	if !codes(Spec(spec("/var/run/docker.sock"), Options{RuntimeFiles: []string{"/var/run/docker.sock"}}))[CodeContainerSocket] {
		t.Error("RuntimeFiles exempted an engine socket")
	}
}
