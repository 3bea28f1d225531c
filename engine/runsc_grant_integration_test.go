//go:build integration && linux

package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// The chown grant (GrantChown, runsc's): a root-owned workspace's
// directories and files are lent to the agent's host ids, and everything
// the lending would change beyond the owner is left as it is: a file with
// two links, a set-uid file, one with file capabilities, one with named
// ACL entries, one of another owner, what a symlink points to. The agent
// writes a lent file, makes files and a directory and opens the
// workspace to everyone (chmod 0777); after the revoke every inode is
// root's again, the workspace's mode is the one it had, and the inodes left
// alone are exactly as they were.
func TestChownGrantLendsAndGivesBackAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	base, err := os.MkdirTemp("", "abchown-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	for _, d := range []string{base, ws, filepath.Join(ws, "d")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"lent", "d/lent", "linked", "setuid", "capped", "acl", "bob"} {
		writeFile(t, filepath.Join(ws, f), 0o644)
	}
	if err := os.Link(filepath.Join(ws, "linked"), filepath.Join(base, "outside-link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(filepath.Join(ws, "setuid"), 0o4755); err != nil {
		t.Fatal(err)
	}
	// vfs_cap_data revision 2: cap_net_raw permitted and effective.
	caps := []byte{0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if err := unix.Setxattr(filepath.Join(ws, "capped"), "security.capability", caps, 0); err != nil {
		t.Fatal(err)
	}
	setACL(t, filepath.Join(ws, "acl"), xattrAccess, []aclEntry{{aclUserObj, 6, aclNoID}, {aclUser, 6, 1234}, {aclGroupObj, 4, aclNoID}, {aclMask, 6, aclNoID}, {aclOther, 4, aclNoID}})
	if err := os.Chown(filepath.Join(ws, "bob"), 1234, 1234); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/shadow", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	left := map[string]fileState{}
	for _, f := range []string{"linked", "setuid", "capped", "acl", "bob"} {
		left[f] = stateOf(t, filepath.Join(ws, f))
	}
	shadow := stateOf(t, "/etc/shadow")
	g, err := NewGrant(ws, realAgentID, realAgentID, filepath.Join(base, "grants"))
	if err != nil {
		t.Fatal(err)
	}
	g.Method = GrantChown
	rep, err := g.Apply()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lent != 4 {
		t.Errorf("%d inodes lent, want 4 (the workspace, d, lent, d/lent): %+v", rep.Lent, rep)
	}
	skipped := strings.Join(rep.Skipped, "\n")
	for _, want := range []string{"./linked: has 2 hard links", "./setuid: is set-uid", "./capped: has file capabilities", "./acl: has named ACL entries", "1 inode(s) owned by neither"} {
		if !strings.Contains(skipped, want) {
			t.Errorf("skipped lacks %q:\n%s", want, skipped)
		}
	}
	for _, f := range []string{".", "d", "lent", "d/lent"} {
		if st := stateOf(t, filepath.Join(ws, f)); st.UID != realAgentID || st.GID != realAgentID {
			t.Errorf("%s is %d:%d under the grant, want the agent's", f, st.UID, st.GID)
		}
	}
	for f, was := range left {
		if got := stateOf(t, filepath.Join(ws, f)); got != was {
			t.Errorf("%s changed by the grant: %+v, was %+v", f, got, was)
		}
	}
	agent := exec.Command("sh", "-c", "echo more >> lent && echo x > new && mkdir e && echo y > e/f && echo z > d/g && chmod 0777 . && ! echo no >> bob 2>/dev/null")
	agent.Dir = ws
	agent.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: realAgentID, Gid: realAgentID}}
	if out, err := agent.CombinedOutput(); err != nil {
		t.Fatalf("agent: %v: %s", err, out)
	}
	rev, err := g.Revoke()
	if err != nil {
		t.Fatal(err)
	}
	if rev.GivenBack != 8 {
		t.Errorf("%d inodes given back, want 8 (the workspace, d, lent, d/lent, new, e, e/f, d/g)", rev.GivenBack)
	}
	_ = filepath.Walk(ws, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(ws, p)
		if want := left[rel]; rel == "bob" && (st.Uid != want.UID || st.Gid != want.GID) || rel != "bob" && (st.Uid != 0 || st.Gid != 0) {
			t.Errorf("%s owned by %d:%d after the revoke", rel, st.Uid, st.Gid)
		}
		return nil
	})
	if st := stateOf(t, ws); st.Mode&0o7777 != 0o755 {
		t.Errorf("the workspace's mode is %04o after the revoke, want 0755 as before", st.Mode&0o7777)
	}
	for f, was := range left {
		if got := stateOf(t, filepath.Join(ws, f)); got != was {
			t.Errorf("%s after the revoke: %+v, was %+v", f, got, was)
		}
	}
	if got := stateOf(t, "/etc/shadow"); got != shadow {
		t.Errorf("/etc/shadow changed: %+v, was %+v", got, shadow)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "lent")); err != nil || !strings.HasSuffix(string(b), "more\n") {
		t.Errorf("the agent's write to a lent file: %q, %v", b, err)
	}
}
