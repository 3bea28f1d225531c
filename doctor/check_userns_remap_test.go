package doctor

import (
	"context"
	"strings"
	"testing"
)

// TestDockerUserNSRunning: what the running dockerd says decides the hint,
// never daemon.json; it never blocks, and says nothing without a dockerd.
func TestDockerUserNSRunning(t *testing.T) {
	tests := []struct {
		name   string
		answer string // docker info's security options; "" fails
		socket bool
		status Status // "" for no result
		fix    string
	}{
		{"no dockerd", "", false, "", ""},
		{"remapping", `["name=seccomp,profile=builtin","name=userns"]`, true, Pass, ""},
		{"rootless", `["name=seccomp,profile=builtin","name=rootless","name=cgroupns"]`, true, Pass, ""},
		{"no remap", `["name=apparmor","name=seccomp,profile=builtin"]`, true, Warn, `"userns-remap": "default" in /etc/docker/daemon.json and restart dockerd`},
		{"no answer", "", true, Unknown, "docker info --format '{{json .SecurityOptions}}'"},
		{"not JSON", "Client: Docker Engine", true, Unknown, "docker info"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := &fixtureHost{Commands: map[string]string{}}
			if tc.answer != "" {
				fx.Commands["docker info --format {{json .SecurityOptions}}"] = tc.answer + "\n"
			}
			f := &Facts{Docker: DockerFacts{Installed: true, SocketFound: tc.socket, Config: DaemonConfig{UsernsRemap: "default"}}}
			gatherDockerUserNS(context.Background(), Host{Sys: fx}, f)
			rs := checkDockerUserNS(f)
			if tc.status == "" {
				if len(rs) != 0 {
					t.Errorf("results %+v, want none", rs)
				}
				return
			}
			if len(rs) != 1 || rs[0].Status != tc.status || !strings.Contains(rs[0].Fix, tc.fix) {
				t.Fatalf("results %+v, want one %s with a fix naming %q", rs, tc.status, tc.fix)
			}
			if rs[0].Blocks() || rs[0].Layer != "" {
				t.Errorf("the hint blocks or decides a layer: %+v", rs[0])
			}
		})
	}
}
