package audit

import (
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/netpolicy"
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

// The gateway's own per-run key is not a secret finding, whatever its name;
// a real key under the same name is.
func TestGatewayTokenIsNotASecret(t *testing.T) {
	tok, err := netpolicy.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	spec := func(v string) *specs.Spec {
		return &specs.Spec{Process: &specs.Process{Env: []string{"OPENAI_API_KEY=" + v}}}
	}
	has := func(r Report) bool {
		for _, c := range r.Containers {
			for _, f := range c.Findings {
				if f.Code == CodeSecretInEnv {
					return true
				}
			}
		}
		return false
	}
	if has(Spec(spec(tok), Options{})) {
		t.Error("a gateway token is reported as a secret")
	}
	if !has(Spec(spec("sk-proj-"+strings.Repeat("a", 40)), Options{})) {
		t.Error("a real-looking key is not reported")
	}
	if !has(Spec(spec(GatewayTokenPrefix+"short"), Options{})) {
		t.Error("a value that only starts like a token passes")
	}
}

func TestGatewayTokenPrefixIsTheGateways(t *testing.T) {
	if GatewayTokenPrefix != netpolicy.TokenPrefix {
		t.Errorf("audit says %q, the gateway %q", GatewayTokenPrefix, netpolicy.TokenPrefix)
	}
}
