//go:build integration && linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// agentbox runs audit, compose and kube from agentbox-ext beside it, and
// a launch on containerd from agentbox-containerd beside it, with the
// arguments, streams and exit code passed through; without the helper
// beside it (one on PATH does not count), or with one someone else could
// have replaced, it says what to install and exits 4.
func TestHelperBesideAgentboxOnly(t *testing.T) {
	code := func(args []string, env ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if c, out := code([]string{agentboxBin, "audit", "--codes"}); c != 0 || !strings.Contains(out, "container-socket-mounted") {
		t.Errorf("audit --codes through agentbox-ext: exit %d\n%s", c, out)
	}
	if c, out := code([]string{agentboxBin, "audit", "--source", "nonsense", "x"}); c != 2 {
		t.Errorf("a usage error of agentbox-ext's exits %d, want its own 2\n%s", c, out)
	}
	alone := t.TempDir()
	data, err := os.ReadFile(agentboxBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(alone, "agentbox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	onPath := filepath.Dir(agentboxBin) // agentbox-ext and agentbox-containerd are there
	for _, args := range [][]string{{"audit", "--codes"}, {"compose", "--help"}, {"kube", "--help"}, {"run", "--engine", "containerd", "--", "true"}} {
		helper := "agentbox-ext"
		if args[0] == "run" {
			helper = "agentbox-containerd"
		}
		c, out := code(append([]string{filepath.Join(alone, "agentbox")}, args...), "PATH="+onPath+":"+os.Getenv("PATH"))
		if c != 4 || !strings.Contains(out, helper+" is not installed beside agentbox") || !strings.Contains(out, "make build") {
			t.Errorf("agentbox %v without %s beside it: exit %d, want 4 and the fix\n%s", args, helper, c, out)
		}
	}
	// agentbox-ext links no containerd engine either: it hands such a run
	// on to agentbox-containerd beside it, and says so when it is missing.
	ext, err := os.ReadFile(filepath.Join(filepath.Dir(agentboxBin), "agentbox-ext"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(alone, "agentbox-ext"), ext, 0o755); err != nil {
		t.Fatal(err)
	}
	if c, out := code([]string{filepath.Join(alone, "agentbox-ext"), "run", "--engine", "containerd", "--", "true"}); c != 4 || !strings.Contains(out, "agentbox-containerd is not installed beside agentbox") || !strings.Contains(out, "--engine containerd") {
		t.Errorf("agentbox-ext run --engine containerd without agentbox-containerd beside it: exit %d, want 4 and the fix\n%s", c, out)
	}
	if err := os.WriteFile(filepath.Join(alone, "agentbox-containerd"), data, 0o755); err != nil { // the launch binary under that name
		t.Fatal(err)
	}
	if c, out := code([]string{filepath.Join(alone, "agentbox"), "run", "--engine", "containerd", "--", "true"}); c != 4 || !strings.Contains(out, "built without the agentbox_containerd tag") {
		t.Errorf("agentbox-containerd that is the launch binary: exit %d, want 4, not a loop\n%s", c, out)
	}
	if err := os.Remove(filepath.Join(alone, "agentbox-ext")); err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(alone, "agentbox-ext")
	if err := os.WriteFile(helper, data, 0o755); err != nil { // the launch binary under the helper's name
		t.Fatal(err)
	}
	if c, out := code([]string{filepath.Join(alone, "agentbox"), "audit", "--codes"}); c != 4 || !strings.Contains(out, "built without the agentbox_ext tag") {
		t.Errorf("agentbox-ext that is the launch binary: exit %d, want 4, not a loop\n%s", c, out)
	}
	if err := os.WriteFile(helper, []byte("#!/bin/sh\necho replaced\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(helper, 0o777); err != nil {
		t.Fatal(err)
	}
	if c, out := code([]string{filepath.Join(alone, "agentbox"), "audit", "--codes"}); c != 4 || strings.Contains(out, "replaced") || !strings.Contains(out, "writable by group or others") {
		t.Errorf("a world-writable agentbox-ext: exit %d, want 4 and not run\n%s", c, out)
	}
}
