package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/policy"
)

// fakeOnPath puts executables of the given names (never run) on a PATH of
// their own.
func fakeOnPath(t *testing.T, names ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 99\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

// An agent that is not installed is an input error whose fix says how to
// install it; nothing runs.
func TestAgentSelfTestNotInstalled(t *testing.T) {
	fakeOnPath(t)
	for agent, install := range map[string]string{
		"goose": "github.com/block/goose/releases", "aider": "aider-install", "gemini": "@google/gemini-cli",
		"codex": "@openai/codex", "mytool": "--agent /path/to/mytool",
	} {
		res, err := AgentSelfTest(t.Context(), Config{}, agent, AgentTestOptions{})
		var in *policy.InputError
		if !errors.As(err, &in) || ExitCode(err) != ExitUsage {
			t.Errorf("%s: err %v (exit %d), want an input error", agent, err, ExitCode(err))
			continue
		}
		if !strings.Contains(err.Error(), agent+" is not installed") || !strings.Contains(in.Fix, install) {
			t.Errorf("%s: %q, fix %q: want %q named", agent, err, in.Fix, install)
		}
		if res.Record.RunID != "" || len(res.Attempts) > 0 {
			t.Errorf("%s: something ran: %+v", agent, res)
		}
	}
}

// An installed aider is not run: the scripted model cannot drive it, and
// that is a finding, never a pass.
func TestAgentSelfTestUndrivable(t *testing.T) {
	fakeOnPath(t, "aider")
	res, err := AgentSelfTest(t.Context(), Config{}, "aider", AgentTestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitFindings || res.Undrivable == "" || res.Record.RunID != "" {
		t.Errorf("aider: %+v", res)
	}
	var b strings.Builder
	PrintAttempts(&b, res)
	if !strings.Contains(b.String(), "FAIL: cannot drive its tool calls") || strings.Contains(b.String(), "PASS") {
		t.Errorf("printed %q", b.String())
	}
}

// The commands the self-test runs, each agent in its auto-approve mode
// with flags its CLI documents.
func TestAgentArgv(t *testing.T) {
	fakeOnPath(t, "codex", "claude", "gemini", "goose", "aider", "mytool")
	for agent, want := range map[string][]string{
		"codex":       {"codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", escapePrompt},
		"claude":      {"claude", "-p", "--dangerously-skip-permissions", escapePrompt},
		"gemini":      {"gemini", "--yolo", "--model", "gemini-2.5-flash", "--prompt", escapePrompt},
		"goose":       {"goose", "run", "--no-session", "--provider", "openai", "--model", "gpt-4o", "--with-builtin", "developer", "--text", escapePrompt},
		"mytool -v":   {"mytool", "-v", escapePrompt},
		"aider":       nil,
		"nonexistent": nil,
	} {
		if got := AgentArgv(agent); !slices.Equal(got, want) {
			t.Errorf("AgentArgv(%q) = %q, want %q", agent, got, want)
		}
	}
}

func TestCheckOutside(t *testing.T) {
	for addr, ok := range map[string]bool{
		"": true, "198.18.3.2:8080": true, "[2001:db8::2]:80": true,
		"127.0.0.1:80": false, "[::1]:80": false, "0.0.0.0:80": false, "example.com:80": false, "198.18.3.2": false, "198.18.3.2:0": false,
	} {
		if err := checkOutside(addr); (err == nil) != ok {
			t.Errorf("checkOutside(%q) = %v", addr, err)
		}
	}
}

// gemini's workspace settings are written as new files.
func TestWriteAgentFiles(t *testing.T) {
	ws := t.TempDir()
	files := agentSpecs["gemini"].files
	if err := writeAgentFiles(ws, files); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(ws, ".gemini", "settings.json"))
	if err != nil || !strings.Contains(string(b), `"selectedType":"gemini-api-key"`) {
		t.Fatalf("%s %v", b, err)
	}
	if err := writeAgentFiles(ws, files); err == nil {
		t.Error("an existing file was written over")
	}
}
