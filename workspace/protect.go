package workspace

import (
	"fmt"
	"path"
	"strings"
)

// Protected is one default protected path and why it is protected.
type Protected struct {
	// Path is relative to the workspace, with slashes.
	Path string
	// Reason says what the agent could do with the path if it could write it.
	Reason string
}

// DefaultProtect are the paths bound read-only over themselves inside the
// sandbox, where they exist, when the policy names none. docs/workspace.md
// compares the list with Codex's (its bubblewrap sandbox re-binds .git and
// .codex read-only below each writable root) and Claude Code's (it asks
// before any write to .git, .vscode, .idea, .husky, .claude and the shell's
// rc files, whatever the permission mode).
var DefaultProtect = []Protected{
	{"agentbox.yaml", "the workspace's policy file: a line the agent adds (a runtime path, a key_file route, a wider env allowlist) would decide the next run"},
	{".agentbox", "agentbox's own directory in the workspace, for the same reason as agentbox.yaml"},
	{".git/config", "git runs programs named in it (core.fsmonitor, core.sshCommand, core.pager, filter and diff drivers, credential helpers) on the user's next git command, as the user"},
	{".git/hooks", "git runs the hooks in it on commit, checkout, merge and push, as the user"},
	{".git/info", "info/attributes assigns filter and diff drivers to paths, and info/exclude hides files from git status"},
}

// DefaultProtectPaths returns the paths of DefaultProtect.
func DefaultProtectPaths() []string {
	out := make([]string, len(DefaultProtect))
	for i, p := range DefaultProtect {
		out[i] = p.Path
	}
	return out
}

// CheckProtectPath reports why p cannot be a protected path: it must be
// relative to the workspace, clean, and stay inside it.
func CheckProtectPath(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return fmt.Errorf("empty path")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is absolute; protected paths are relative to the workspace", p)
	case path.Clean(p) != p:
		return fmt.Errorf("%q is not clean; write it as %q", p, path.Clean(p))
	case p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("%q is not below the workspace", p)
	}
	return nil
}
