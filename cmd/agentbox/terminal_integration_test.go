//go:build integration && linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// hostileOutput writes, between markers, a clipboard write (OSC 52, ended
// by BEL and by ST, and in its 8-bit form), window titles, a DCS string, a
// terminal reset, a scrollback erase and the alternate screen, and leaves
// the alternate screen on and the cursor hidden.
const hostileOutput = `printf 'BEGIN\033]52;c;cm0gLXJmIH4K\007\033]52;p;cm0gLXJmIH4K\033\\'
printf '\033]0;owned\007\033]2;owned\033\\\033P+q544e\033\\\033c\033[3J\2352;owned\007'
printf '\033[?1049h\033[?25l\033[31mINSIDE\033[0m' >&2
printf 'END'
`

// what must never reach the user's terminal from hostileOutput.
var forbiddenOnTerminal = []string{"\x1b]52", "\x1b]0;", "\x1b]2;", "\x1bP", "\x1bc", "\x1b[3J", "\x9d", "owned"}

// agentScript writes body into the workspace as a script the agent runs
// (sh PATH), free of the quoting of the command lines around it.
func agentScript(t *testing.T, ws, name, body string) string {
	t.Helper()
	p := filepath.Join(ws, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// scriptCommand runs inner with sh in a fresh pty (script(1)), as from a
// user's terminal. script's stdin is a pipe held open for the test's
// length, not /dev/null: at the end of its stdin script writes the EOF
// character (^D) into the pty, which the line discipline, still canonical
// then, keeps as an end-of-file mark. A program that puts the terminal in
// raw mode afterwards (the launcher does) reads that mark as a NUL byte,
// which it would pass on as a keystroke the user never typed, echoed by
// the agent's pty as "^@" before the agent's first output.
func scriptCommand(t *testing.T, env []string, dir, inner string) *exec.Cmd {
	t.Helper()
	script := testutil.RequireBinary(t, "script", "util-linux")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	cmd := exec.Command(script, "-qec", inner, "/dev/null")
	cmd.Env, cmd.Dir, cmd.Stdin = env, dir, r
	return cmd
}

// runUnderPty runs inner under scriptCommand and returns everything the
// pty's user side received.
func runUnderPty(t *testing.T, env []string, dir, inner string) string {
	t.Helper()
	cmd := scriptCommand(t, env, dir, inner)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%q", err, out)
	}
	return string(out)
}

// agentOutput is what a terminal showed, carriage returns and agentbox's
// own note lines left out: the shell's and the agent's output.
func agentOutput(shown string) string {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(shown, "\r", ""), "\n") {
		if !strings.HasPrefix(l, "agentbox: ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// checkStartsWithAgent fails t unless the first bytes a terminal showed
// (agentbox's notes aside) are first, the agent's first output, and no NUL
// (nor the "^@" a pty echoes for one typed) reached it.
func checkStartsWithAgent(t *testing.T, shown, first string) {
	t.Helper()
	if !strings.HasPrefix(agentOutput(shown), first) {
		t.Errorf("the terminal does not show the agent's %q first:\n%q", first, shown)
	}
	if strings.Contains(shown, "\x00") || strings.Contains(shown, "^@") {
		t.Errorf("a NUL reached the terminal:\n%q", shown)
	}
}

// Under a real pty, the agent's clipboard writes, titles, DCS, reset and
// scrollback erase never reach the user's terminal, while text, colours and
// the alternate screen do; at the agent's exit the terminal is put back
// (alternate screen left, cursor shown), and agentbox's own note comes
// after all of it. Both with the agent on a pty of its own and with stdin
// from a file, where the agent's output is piped and copied to the
// terminal.
func TestTerminalFilterKeepsSequencesFromTheUsersTerminal(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	hostile := agentScript(t, ws, "hostile.sh", hostileOutput)
	for name, redirect := range map[string]string{"pty": "", "pipes": " </dev/null"} {
		t.Run(name, func(t *testing.T) {
			out := runUnderPty(t, env, ws, agentboxBin+" run -- sh "+hostile+redirect+"; echo exit=$?")
			checkStartsWithAgent(t, out, "BEGIN")
			for _, bad := range forbiddenOnTerminal {
				if strings.Contains(out, bad) {
					t.Errorf("%q reached the terminal:\n%q", bad, out)
				}
			}
			for _, want := range []string{"BEGIN", "\x1b[?1049h\x1b[?25l\x1b[31mINSIDE\x1b[0m", "END", "exit=0"} {
				if !strings.Contains(out, want) {
					t.Errorf("%q did not reach the terminal:\n%q", want, out)
				}
			}
			end, restore := strings.Index(out, "END"), strings.Index(out, "\x1b[?1049l\x1b[?25h")
			note := strings.Index(out, "agentbox: terminal filter removed")
			if restore < end || note < restore {
				t.Errorf("want the agent's output, then the terminal restored, then agentbox's note:\n%q", out)
			}
		})
	}
}

// --raw-terminal lets everything through, and says so in the record.
func TestRawTerminalPassesEverything(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	out := runUnderPty(t, env, ws, agentboxBin+` run --raw-terminal -- printf 'A\033]52;c;eA==\007B'`)
	if !strings.Contains(out, "A\x1b]52;c;eA==\x07B") {
		t.Errorf("--raw-terminal filtered:\n%q", out)
	}
	show := runIn(t, env, ws, "runs", "--json")
	if !strings.Contains(show.stdout, "terminal filter off (--raw-terminal)") {
		t.Errorf("the record does not say the filter was off:\n%s", show.stdout)
	}
}

// Redirected to a host file opened with >>, the agent's stdout is a pipe:
// ftruncate(1, 0), truncate -s 0 /dev/stdout and a write through an O_RDWR
// stdin leave the user's files as they were, and the agent's output is
// appended after what was there.
func TestSandboxNeverGetsTheUsersFiles(t *testing.T) {
	uid, gid := testUser(t)
	perl := testutil.RequireBinary(t, "perl", "perl-base")
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	dir := t.TempDir()
	log, in := filepath.Join(dir, "build.log"), filepath.Join(dir, "input")
	const earlier = "earlier build output\n"
	for _, f := range []string{log, in} {
		if err := os.WriteFile(f, []byte(earlier), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	agent := agentScript(t, ws, "agent.sh", perl+` -e 'truncate(STDOUT, 0) and print "truncated\n"; truncate(STDERR, 0); print STDIN "overwritten"; print "after\n"'
truncate -s 0 /dev/stdout 2>/dev/null
exit 4
`)
	inner := agentboxBin + " run -- sh " + agent + " >>" + log + " 2>>" + log + " 0<>" + in + "; echo $? > " + filepath.Join(dir, "code")
	cmd := exec.Command("sh", "-c", "cd "+ws+" && "+inner)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	data, _ := os.ReadFile(log)
	if !strings.HasPrefix(string(data), earlier) || !strings.Contains(string(data), "after\n") || strings.Contains(string(data), "truncated") {
		t.Errorf("build.log after the run:\n%s", data)
	}
	if data, _ := os.ReadFile(in); string(data) != earlier {
		t.Errorf("the file given as stdin became %q", data)
	}
	if code, _ := os.ReadFile(filepath.Join(dir, "code")); strings.TrimSpace(string(code)) != "4" {
		t.Errorf("exit code %q, want the agent's 4", code)
	}
}
