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

// The agent's host uid here: unused on the test host, as a run's leased
// slot is.
const realAgentID = 2147000123

// A real agent uid writes into a root-owned granted workspace, with umask
// 077, a set-gid 2745 tool it gives uid 1234 rwx on with setfacl, a
// symlink to /etc/shadow and a FIFO. After the revoke everything is root's
// again, no set-id bit and no ACL entry is left, the symlink was given back
// as a link and its target never touched.
func TestRevokeGivesAgentFilesBackAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	base, err := os.MkdirTemp("", "abgrant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	for _, d := range []string{base, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shadow := stateOf(t, "/etc/shadow")
	g, err := NewGrant(ws, realAgentID, realAgentID, filepath.Join(base, "grants"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Apply(); err != nil {
		t.Fatal(err)
	}
	agent := exec.Command("sh", "-c", "umask 077 && echo x > tool && chmod 2745 tool && setfacl -n -m u:1234:rwx tool && echo y > secret && mkdir d && echo z > d/f && ln -s /etc/shadow link && mkfifo fifo")
	agent.Dir = ws
	agent.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: realAgentID, Gid: realAgentID}}
	if out, err := agent.CombinedOutput(); err != nil {
		t.Fatalf("agent: %v: %s", err, out)
	}
	if st := stateOf(t, filepath.Join(ws, "tool")); st.UID != realAgentID || st.Mode&0o7777 != 0o2745 {
		t.Fatalf("the agent's tool is %+v; the test proves nothing", st)
	}
	rep, err := g.Revoke()
	if err != nil {
		t.Fatal(err)
	}
	if rep.GivenBack != 6 {
		t.Errorf("%d inodes given back, want 6 (tool, secret, d, d/f, link, fifo)", rep.GivenBack)
	}
	if len(rep.SetIDCleared) != 1 || !strings.HasPrefix(rep.SetIDCleared[0], "./tool ") {
		t.Errorf("set-id cleared %q, want ./tool", rep.SetIDCleared)
	}
	want := map[string]uint32{"tool": 0o745, "secret": 0o644, "d": 0o755, "d/f": 0o644, "fifo": 0o644}
	_ = filepath.Walk(ws, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(ws, p)
		if st.Uid != 0 || st.Gid != 0 {
			t.Errorf("%s owned by %d:%d after revoke, want 0:0", rel, st.Uid, st.Gid)
		}
		if m, ok := want[rel]; ok && st.Mode&0o7777 != m {
			t.Errorf("%s mode %04o after revoke, want %04o", rel, st.Mode&0o7777, m)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			for _, attr := range []string{xattrAccess, xattrDefault} {
				if n, err := unix.Lgetxattr(p, attr, nil); err == nil && n > 0 {
					t.Errorf("%s still carries %s", rel, attr)
				}
			}
		}
		return nil
	})
	if target, err := os.Readlink(filepath.Join(ws, "link")); err != nil || target != "/etc/shadow" {
		t.Errorf("link is %q, %v", target, err)
	}
	if got := stateOf(t, "/etc/shadow"); got != shadow {
		t.Errorf("/etc/shadow changed: %+v, was %+v", got, shadow)
	}
}
