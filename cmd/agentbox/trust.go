package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentbox/agentbox/policy"
)

func init() {
	register(command{name: "trust", summary: "trust a workspace's agentbox.yaml in its current content (like direnv allow)", run: runTrust})
}

// trustFlags are agentbox trust's flags.
type trustFlags struct {
	workspace string
	digest    string
	revoke    bool
	list      bool
	check     bool
	json      bool
}

// runTrust trusts, checks, revokes or lists workspace policy files. A
// workspace's agentbox.yaml is the agent's side: `run` uses it only in
// the exact content trusted here, and the trust store is kept in the user's
// configuration directory, where no sandbox can write.
func runTrust(_ context.Context, s stdio, args []string) int {
	var f trustFlags
	fs := newFlags(s, "trust", "[flags] [FILE|DIR]")
	fs.StringVarP(&f.workspace, "workspace", "w", "", "workspace whose agentbox.yaml to trust (default: current directory)")
	fs.StringVar(&f.digest, "digest", "", "trust only if the file still has this digest (the one a refusal printed)")
	fs.BoolVar(&f.check, "check", false, "only say whether the file is trusted (exit 0) or not (exit 1), with the diff")
	fs.BoolVar(&f.revoke, "revoke", false, "forget the file: runs refuse it again until it is trusted")
	fs.BoolVar(&f.list, "list", false, "list the trusted files")
	fs.BoolVar(&f.json, "json", false, "print the result as JSON")
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 1 || len(cmd) > 0 || countTrue(f.revoke, f.list, f.check) > 1 {
		fmt.Fprintln(s.Err, "agentbox trust: give at most one FILE or DIR and at most one of --check, --revoke, --list; see 'agentbox trust --help'")
		return exitUsage
	}
	cfg, err := policy.ConfigDir(s.Getenv)
	if err != nil {
		fmt.Fprintf(s.Err, "agentbox trust: %v\n", err)
		return exitUsage
	}
	store := policy.Sources{ConfigDir: cfg}.Store()
	if f.list {
		return trustList(s, store, f.json)
	}
	path, err := trustTarget(f.workspace, pos)
	if err != nil {
		fmt.Fprintf(s.Err, "agentbox trust: %v\n", err)
		return exitUsage
	}
	if f.revoke {
		return trustRevoke(s, store, path, f.json)
	}
	return trustFile(s, store, path, f)
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// trustTarget is the absolute path of the file to trust: FILE, DIR's
// agentbox.yaml, or the workspace's.
func trustTarget(workspace string, pos []string) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	target := workspace
	if len(pos) == 1 {
		target = pos[0]
	}
	if target == "" {
		target = cwd
	}
	target = absFrom(cwd, target)
	if fi, err := os.Lstat(target); err == nil && fi.IsDir() {
		target = filepath.Join(target, policy.FileName)
	}
	// The directory part is the user's to name (symlinks included); the file
	// itself is read without following a link, like every policy file.
	dir, err := filepath.EvalSymlinks(filepath.Dir(target))
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Dir(target), err)
	}
	return filepath.Join(dir, filepath.Base(target)), nil
}

// trustStatus is what agentbox trust reports for one file.
type trustStatus struct {
	Path    string `json:"path"`
	Digest  string `json:"digest,omitempty"`
	Trusted bool   `json:"trusted"`
	// Changed is true when an earlier content was trusted.
	Changed bool   `json:"changed,omitempty"`
	Diff    string `json:"diff,omitempty"`
	// Action is what this invocation did: "trusted", "unchanged", "checked"
	// or "revoked".
	Action string `json:"action"`
}

func trustFile(s stdio, store policy.TrustStore, path string, f trustFlags) int {
	data, _, err := policy.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(s.Err, "agentbox trust: %s does not exist; there is nothing to trust\n", path)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(s.Err, "agentbox trust: %v\n", err)
		return exitUsage
	}
	st := trustStatus{Path: path, Digest: policy.Digest(data)}
	var untrusted *policy.UntrustedError
	switch err := store.Check(path, data); {
	case errors.As(err, &untrusted):
		st.Changed, st.Diff = untrusted.Previous != nil, untrusted.Diff
	case err != nil:
		fmt.Fprintf(s.Err, "agentbox trust: %v\n", err)
		return exitHost
	default:
		st.Trusted = true
	}
	if f.check {
		st.Action = "checked"
		return trustReport(s, st, f.json, exitFindings)
	}
	if f.digest != "" && f.digest != st.Digest {
		fmt.Fprintf(s.Err, "agentbox trust: %s is %s now, not %s: it changed since you reviewed it; nothing was trusted\n", path, st.Digest, f.digest)
		return exitRefused
	}
	if _, err := policy.ParseChecked(path, data, policy.SourceWorkspace); err != nil {
		fmt.Fprintf(s.Err, "agentbox trust: %v\nnothing was trusted: fix the file first\n", err)
		return exitUsage
	}
	st.Action = "unchanged"
	if !st.Trusted {
		if _, err := store.Trust(path, data, time.Now()); err != nil {
			fmt.Fprintf(s.Err, "agentbox trust: %v\n", err)
			return exitHost
		}
		st.Action, st.Trusted = "trusted", true
	}
	return trustReport(s, st, f.json, exitOK)
}

// trustReport prints st; untrustedCode is the exit code when st is not
// trusted.
func trustReport(s stdio, st trustStatus, asJSON bool, untrustedCode int) int {
	code := exitOK
	if !st.Trusted {
		code = untrustedCode
	}
	if asJSON {
		if c := writeJSON(s, "trust", st); c != exitOK {
			return c
		}
		return code
	}
	switch {
	case st.Action == "unchanged" || (st.Action == "checked" && st.Trusted):
		fmt.Fprintf(s.Out, "%s is trusted (%s)\n", st.Path, st.Digest)
	case st.Action == "checked" && st.Changed:
		fmt.Fprintf(s.Out, "%s changed since it was trusted; the change:\n%s\n", st.Path, st.Diff)
	case st.Action == "checked":
		fmt.Fprintf(s.Out, "%s is not trusted (%s); it says:\n%s\n", st.Path, st.Digest, indent(st.Diff))
	case st.Changed:
		fmt.Fprintf(s.Out, "trusted %s (%s); the change from the content trusted before:\n%s\n", st.Path, st.Digest, st.Diff)
	default:
		fmt.Fprintf(s.Out, "trusted %s (%s):\n%s\n", st.Path, st.Digest, indent(st.Diff))
	}
	return code
}

// indent strips LineDiff's "+ " marks of a first-time trust into a plain
// indented listing of the file.
func indent(diff string) string {
	lines := strings.Split(diff, "\n")
	for i, l := range lines {
		lines[i] = "  " + strings.TrimPrefix(l, "+ ")
	}
	return strings.Join(lines, "\n")
}

func trustRevoke(s stdio, store policy.TrustStore, path string, asJSON bool) int {
	had, err := store.Revoke(path)
	if err != nil {
		fmt.Fprintf(s.Err, "agentbox trust: %v\n", err)
		return exitHost
	}
	if !had {
		fmt.Fprintf(s.Err, "agentbox trust: %s was not trusted; nothing to revoke\n", path)
		return exitFindings
	}
	if asJSON {
		return writeJSON(s, "trust", trustStatus{Path: path, Action: "revoked"})
	}
	fmt.Fprintf(s.Out, "revoked %s: runs refuse it until it is trusted again\n", path)
	return exitOK
}

func trustList(s stdio, store policy.TrustStore, asJSON bool) int {
	entries, err := store.List()
	if err != nil {
		fmt.Fprintf(s.Err, "agentbox trust: %v\n", err)
		return exitHost
	}
	if asJSON {
		out := make([]trustStatus, 0, len(entries))
		for _, e := range entries {
			out = append(out, trustStatus{Path: e.Path, Digest: e.Digest, Trusted: true, Action: "listed"})
		}
		return writeJSON(s, "trust", out)
	}
	if len(entries) == 0 {
		fmt.Fprintf(s.Err, "agentbox trust: no trusted files in %s\n", store.Dir)
		return exitOK
	}
	for _, e := range entries {
		fmt.Fprintf(s.Out, "%s  %s  %s\n", e.Trusted.Format(time.DateOnly), e.Digest, e.Path)
	}
	return exitOK
}
