//go:build integration && linux

package main

import (
	"strings"
	"testing"
)

// With a terminal, the agent gets a fresh pty of its own (never the
// launcher's terminal device, which would let it inject keystrokes into the
// user's shell), sized like the user's terminal, and its exit code passes;
// the run's first bytes on the user's terminal are the agent's output.
func TestTerminalIsAFreshPty(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	inner := "stty cols 123 rows 45; readlink /proc/self/fd/0; " + agentboxBin +
		` run -- sh -c 'tty; stty size; test -t 0 && test -t 1 && echo both-terminals; exit 5'; echo exit=$?`
	out, err := scriptCommand(t, env, ws, inner).CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	host, agent, _ := strings.Cut(agentOutput(string(out)), "\n")
	if !strings.HasPrefix(host, "/dev/pts/") {
		t.Fatalf("host tty %q: want a pty\n%q", host, out)
	}
	// The first bytes the user's terminal shows from the run are the
	// agent's own: `tty`'s answer, a pty of the sandbox's.
	checkStartsWithAgent(t, agent, "/dev/pts/")
	for _, want := range []string{"45 123", "both-terminals", "exit=5"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
