//go:build integration && linux

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// With a terminal, the agent gets a fresh pty of its own (never the
// launcher's terminal device, which would let it inject keystrokes into the
// user's shell), sized like the user's terminal, and its exit code passes.
func TestTerminalIsAFreshPty(t *testing.T) {
	uid, gid := testUser(t)
	script := testutil.RequireBinary(t, "script", "util-linux")
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	inner := "stty cols 123 rows 45; readlink /proc/self/fd/0; " + agentboxBin +
		` run -- sh -c 'tty; stty size; test -t 0 && test -t 1 && echo both-terminals; exit 5'; echo exit=$?`
	cmd := exec.Command(script, "-qec", inner, "/dev/null")
	cmd.Env, cmd.Dir = env, ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	var lines []string // the shell's and the agent's lines; agentbox's own notes left out
	for _, l := range strings.Split(strings.ReplaceAll(string(out), "\r", ""), "\n") {
		if !strings.HasPrefix(l, "agentbox: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 5 {
		t.Fatalf("output:\n%s", out)
	}
	hostTTY := strings.TrimSpace(lines[0])
	// runc echoes one NUL on a fresh console (plain `runc run` does too),
	// which the pty shows as ^@ before the first line.
	inside := strings.TrimPrefix(strings.TrimSpace(lines[1]), "^@")
	if !strings.HasPrefix(hostTTY, "/dev/pts/") || !strings.HasPrefix(inside, "/dev/pts/") {
		t.Fatalf("host tty %q, sandbox tty %q: want a pty on both sides\n%s", hostTTY, inside, out)
	}
	for _, want := range []string{"45 123", "both-terminals", "exit=5"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
