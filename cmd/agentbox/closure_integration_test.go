//go:build integration && linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
)

// The command's closure, for real: the Codex CLI and Claude Code, installed
// from the npm registry by scripts/agents-install.sh into a cache in each
// layout it builds, are copied out of the cache (hard links as root) to a
// directory of their own and run through `agentbox run -- CLI --version`.
// Each must start (codex dies with "Missing optional dependency
// @openai/codex-linux-x64" when only its package is bound), and the run's
// record lists the bind that made it work, read-only, with why. --version
// needs no network, and no model is ever asked anything.

// The pinned versions, as scripts/agents-install.sh installs them.
const (
	codexVersion  = "0.171.0"
	claudeVersion = "2.1.332"
)

// agentCLI is one CLI of the matrix.
type agentCLI struct {
	name, pkg, version, want string // want: what --version prints
}

var (
	codexCLI  = agentCLI{"codex", "@openai/codex", codexVersion, "codex-cli " + codexVersion}
	claudeCLI = agentCLI{"claude", "@anthropic-ai/claude-code", claudeVersion, claudeVersion + " (Claude Code)"}
)

// npmLayout is one install layout of the cache: where the CLI's bin
// directory is below the layout's copy, and which bind must make it run.
type npmLayout struct {
	name string
	bin  func(nodeVersion string) string // relative to the copy
	bind func(nodeVersion string) string // the closure bind that must be there, relative to the copy
}

var npmLayouts = []npmLayout{
	{"prefix", func(string) string { return "bin" }, func(string) string { return "." }},
	{"local", func(string) string { return "proj/node_modules/.bin" }, func(string) string { return "proj/node_modules" }},
	{"nvm", func(v string) string { return "versions/node/" + v + "/bin" }, func(v string) string { return "versions/node/" + v }},
	{"pnpm", func(string) string { return "proj/node_modules/.bin" }, func(string) string { return "proj/node_modules" }},
}

// agentsCache is where scripts/agents-install.sh keeps its installs.
func agentsCache() string {
	if c := os.Getenv("AGENTBOX_AGENTS_CACHE"); c != "" {
		return c
	}
	return "/var/cache/agentbox-test/npm"
}

// Every layout of both CLIs, as root and as the rootless suite's user
// (scripts/test-rootless.sh hands that user a hard-linked copy of the
// cache, AGENTBOX_AGENTS_CACHE).
func TestClosureNpmLayouts(t *testing.T) {
	for _, cli := range []agentCLI{codexCLI, claudeCLI} {
		for _, l := range npmLayouts {
			t.Run(cli.name+"/"+l.name, func(t *testing.T) { runLayout(t, cli, l) })
		}
	}
}

func runLayout(t *testing.T, cli agentCLI, l npmLayout) {
	src := filepath.Join(agentsCache(), cli.pkg+"@"+cli.version, l.name)
	if _, err := os.Stat(filepath.Join(src, ".done")); err != nil {
		testutil.Skip(t, fmt.Sprintf("%s@%s is not installed in the %s layout at %s (run scripts/agents-install.sh)", cli.pkg, cli.version, l.name, src))
	}
	nodeVersion := strings.TrimSpace(hostOutput(t, "node", "--version"))
	dir := copyTree(t, src)
	bin := filepath.Join(dir, l.bin(nodeVersion))
	want := filepath.Clean(filepath.Join(dir, l.bind(nodeVersion)))
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	env[0] = "PATH=" + bin + ":" + strings.TrimPrefix(env[0], "PATH=")
	evidence := filepath.Join(t.TempDir(), "evidence.jsonl")
	r := runIn(t, env, ws, "run", "--evidence", evidence, "--", cli.name, "--version")
	if r.code != 0 || !strings.Contains(r.stdout, cli.want) {
		t.Fatalf("exit %d, want %q on stdout:\n%s\nstderr:\n%s", r.code, cli.want, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(evidence)
	if err != nil {
		t.Fatal(err)
	}
	_, rec := evidenceLines(t, data)
	requireBind(t, rec, want)
}

// requireBind checks that the record lists a read-only closure bind of
// path, with a reason.
func requireBind(t *testing.T, rec ledger.Record, path string) {
	t.Helper()
	for _, b := range rec.Binds {
		if b.Source == path {
			if b.Kind != "install" || !b.ReadOnly || b.Why == "" {
				t.Errorf("bind %+v: want a read-only install bind with a reason", b)
			}
			return
		}
	}
	t.Errorf("the record's binds %+v lack %s", rec.Binds, path)
}

// A venv on this machine's pyenv Python (outside the system directories,
// in root's home: hence AsRoot) with a small CLI script in it: the script's
// #! line names the venv's python, a symlink to pyenv's, whose libpython
// lies in pyenv's prefix. No package index is used.
func TestClosureVenvOnPyenvAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	pythons, _ := filepath.Glob("/root/.pyenv/versions/3.*/bin/python3")
	if len(pythons) == 0 {
		testutil.Skip(t, "no pyenv Python in /root/.pyenv/versions (install one with pyenv install 3.12)")
	}
	python := pythons[len(pythons)-1]
	prefix := filepath.Dir(filepath.Dir(python))
	runVenv(t, python, prefix, prefix)
}

// The same for any user, the rootless suite's included (root's pyenv is
// unreadable to it, and its builds name /root in their library path): a
// venv on an interpreter copied out of /usr into a prefix of the test's
// own, as a user-installed Python is. Debian's python3 finds no standard
// library beside the copy and takes /usr's, which the sandbox sees; the
// venv and the copy's prefix are what the closure must bind.
func TestClosureVenvOnRelocatedPython(t *testing.T) {
	system, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		testutil.Skip(t, "no /usr/bin/python3: "+err.Error())
	}
	prefix := filepath.Join(shortTempDir(t, "abt-py-"), "python")
	if err := os.MkdirAll(filepath.Join(prefix, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(prefix, "bin", "python3")
	hostOutput(t, "cp", system, python)
	runVenv(t, python, "/usr", prefix)
}

// runVenv makes a venv on python with a small CLI script in it, runs the
// script through agentbox run, and checks that it ran on python (base is
// its sys.base_prefix) and that the record lists read-only binds of the
// venv and of prefix, the interpreter's install.
func runVenv(t *testing.T, python, base, prefix string) {
	t.Helper()
	dir := shortTempDir(t, "abt-venv-")
	venv := filepath.Join(dir, "venv")
	hostOutput(t, python, "-m", "venv", "--without-pip", venv)
	script := "#!" + venv + "/bin/python\nimport sys\nprint('hello from', sys.base_prefix, 'in', sys.prefix)\n"
	if err := os.WriteFile(filepath.Join(venv, "bin", "hello"), []byte(script), 0o755); err != nil { // #nosec G306 -- a program, read by the sandbox's ids
		t.Fatal(err)
	}
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	env[0] = "PATH=" + venv + "/bin:" + strings.TrimPrefix(env[0], "PATH=")
	evidence := filepath.Join(t.TempDir(), "evidence.jsonl")
	r := runIn(t, env, ws, "run", "--evidence", evidence, "--", "hello")
	want := "hello from " + base + " in " + venv
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("exit %d, want %q on stdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(evidence)
	if err != nil {
		t.Fatal(err)
	}
	_, rec := evidenceLines(t, data)
	requireBind(t, rec, venv)
	requireBind(t, rec, prefix)
}

// copyTree returns a copy of src in a directory the sandbox's ids can
// search, outside the system directories the planner refuses to bind
// (/var): hard links as root; as another user (fs.protected_hardlinks: no
// links to root's files) src itself when it is already such a copy
// (test-rootless.sh's, below /tmp), else a full copy.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	mode := "-al"
	if os.Geteuid() != 0 {
		if strings.HasPrefix(src, os.TempDir()+"/") {
			return src
		}
		mode = "-a"
	}
	dst := filepath.Join(shortTempDir(t, "abt-cl-"), "install")
	hostOutput(t, "cp", mode, src, dst)
	return dst
}

// hostOutput runs a host command the test needs and returns its stdout.
func hostOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}
