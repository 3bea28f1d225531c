//go:build agentbox_ext

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/ledger"
)

// testStdio gives a subcommand private state and run directories, so that a
// test never touches the machine's ledger.
func testStdio(t *testing.T, stdout, stderr *bytes.Buffer) stdio {
	state, run := t.TempDir(), t.TempDir()
	return stdio{Out: stdout, Err: stderr, Getenv: func(k string) string {
		switch k {
		case "AGENTBOX_STATE_DIR":
			return state
		case "AGENTBOX_RUN_ROOT":
			return run
		}
		return os.Getenv(k)
	}}
}

// TestComposeBadInput: every bad invocation exits 2 and writes nothing.
func TestComposeBadInput(t *testing.T) {
	ws := t.TempDir()
	t.Chdir(ws)
	out := filepath.Join(ws, "box")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no image", []string{"--agent", "codex", "--out", out}, "--image"},
		{"unknown agent", []string{"--agent", "gemini", "--image", "x", "--out", out}, "unknown agent"},
		{"agent and command", []string{"--agent", "codex", "--image", "x", "--out", out, "--", "sh"}, "not both"},
		{"no command", []string{"--image", "x", "--out", out}, "no agent and no command"},
		{"runtime", []string{"--agent", "codex", "--image", "x", "--runtime", "crun"}, "do not apply"},
		{"out holds the workspace", []string{"--agent", "codex", "--image", "x", "--out", ws}, "holds the workspace"},
		{"positional", []string{"--agent", "codex", "--image", "x", "extra"}, "unexpected argument"},
		{"bad memory", []string{"--agent", "codex", "--image", "x", "--memory", "lots", "--out", out}, "memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), testStdio(t, &stdout, &stderr), append([]string{"compose"}, tc.args...))
			if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d mentioning %q", code, stderr.String(), exitUsage, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("bad input wrote %s", out)
			}
		})
	}
}

func TestComposeCheck(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for name, content := range map[string]string{
		"bad.yaml":   "services:\n  agent:\n    image: [\n",
		"fault.yaml": "services:\n  agent:\n    image: x\n    volumes: [\"/var/run/docker.sock:/var/run/docker.sock\"]\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	s := testStdio(t, &stdout, &stderr)
	if code := dispatch(context.Background(), s, []string{"compose", "--check", "bad.yaml"}); code != exitUsage {
		t.Errorf("bad file: exit %d, want %d; %s", code, exitUsage, stderr.String())
	}
	code := dispatch(context.Background(), s, []string{"compose", "--check", "fault.yaml"})
	if code != exitFindings || !strings.Contains(stdout.String(), "container-socket-mounted") ||
		!strings.Contains(stdout.String(), "fix: remove the bind of /var/run/docker.sock from services.agent.volumes") {
		t.Errorf("fault: exit %d, output:\n%s", code, stdout.String())
	}
	recs, _, err := ledger.Open(filepath.Join(s.Getenv("AGENTBOX_STATE_DIR"), ledger.FileName)).List()
	if err != nil || len(recs) != 1 || recs[0].Kind != ledger.KindAudit || recs[0].ExitCode != exitFindings || len(recs[0].Findings) == 0 {
		t.Errorf("ledger after --check: %+v, %v", recs, err)
	}
}
