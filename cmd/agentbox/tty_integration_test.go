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
	checkStartsWithAgent(t, agent, agentTTYName())
	for _, want := range []string{"45 123", "both-terminals", "exit=5"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// An end of input typed ahead, before the launcher put the user's
// terminal in raw mode (script(1) writes the EOF character when its own
// stdin, here /dev/null, ends), reaches the agent as that EOF character:
// its read on the terminal ends, and no NUL (which a raw read of the
// canonical terminal's end-of-file mark returns) is typed into its pty, nor
// shown as ^@.
func TestTypedAheadEOFReachesTheAgentAsTyped(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	cmd := scriptCommand(t, isolatedEnv(t), ws, agentboxBin+
		` run -- timeout 20 sh -c 'tty; if read -r l; then echo "read=line:$l"; else echo read=eof; fi'`)
	cmd.Stdin = nil // /dev/null
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%q", err, out)
	}
	checkStartsWithAgent(t, string(out), agentTTYName())
	if obs := observations(agentOutput(string(out))); obs["read"] != "eof" {
		t.Errorf("the agent's read: %q, want the end of input\n%q", obs["read"], out)
	}
}
