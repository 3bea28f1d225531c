//go:build integration && linux

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadInputIsOneLineAndLeavesNothing(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	sockDir := t.TempDir()
	sock := filepath.Join(sockDir, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	home, _ := os.UserHomeDir()
	badPolicy := workspaceOwnedBy(t, uid, gid)
	if err := os.WriteFile(filepath.Join(badPolicy, "agentbox.yaml"), []byte("limits:\n  memory: 1GiB\n  swapp: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		args []string
		env  []string
		code int
		want string
	}{
		{"missing runtime", ws, []string{"--runtime", "/nonexistent/runc", "--", "true"}, nil, exitHost, "OCI runtime /nonexistent/runc not found"},
		{"runtime not installed", ws, []string{"--", "true"}, []string{"PATH=/nonexistent"}, exitHost, "apt-get install runc"},
		{"unknown runtime", ws, []string{"--runtime", "docker", "--", "true"}, nil, exitUsage, `unknown runtime "docker"`},
		{"workspace missing", ws, []string{"--workspace", "/nonexistent-ws", "--", "true"}, nil, exitUsage, "does not exist"},
		{"workspace is /", ws, []string{"--workspace", "/", "--", "true"}, nil, exitUsage, "host's root directory"},
		{"workspace is a home", ws, []string{"--workspace", home, "--", "true"}, nil, exitUsage, "home directory"},
		{"command not found", ws, []string{"--", "no-such-agent-xyz"}, nil, exitUsage, `"no-such-agent-xyz" not found on PATH`},
		{"malformed policy", ws, []string{"--policy", filepath.Join(badPolicy, "agentbox.yaml"), "--", "true"}, nil, exitUsage, "agentbox.yaml:3: limits.swapp: unknown key"},
		{"socket bind", ws, []string{"--ro-bind", sock, "--", "true"}, nil, exitUsage, "container engine socket"},
		{"no command", ws, []string{}, nil, exitUsage, "no command"},
		{"bad accept", ws, []string{"--accept", "runs-as-root", "--", "true"}, nil, exitUsage, "want CODE=reason"},
		{"accept typo", ws, []string{"--accept", "extra-writable-mounts=cache", "--", "true"}, nil, exitUsage, `unknown finding code "extra-writable-mounts"`},
	}
	if onRunsc() {
		// The suite's policy names runsc by its path, which PATH does not
		// hide; --runtime runsc is looked up on PATH as runc is.
		tests[1].args, tests[1].want = []string{"--runtime", "runsc", "--", "true"}, "install gVisor's runsc"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := isolatedEnv(t)
			for _, kv := range tt.env {
				k, _, _ := strings.Cut(kv, "=")
				env = append(withoutKey(env, k), kv)
			}
			r := runIn(t, env, tt.dir, append([]string{"run"}, tt.args...)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", r.code, tt.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr %q, want one line containing %q", r.stderr, tt.want)
			}
			assertRunRootEmpty(t, envValue(env, "AGENTBOX_RUN_ROOT"))
		})
	}
}

func withoutKey(env []string, key string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// assertRunRootEmpty checks that a refused launch left no run directory,
// id lease or runtime state.
func assertRunRootEmpty(t *testing.T, root string) {
	t.Helper()
	for _, pattern := range []string{"runs/*", "userns/*.lease", "runtime/*/*"} {
		if left, _ := filepath.Glob(filepath.Join(root, pattern)); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}
}
