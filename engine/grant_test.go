//go:build linux

package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

var cmpACL = cmp.AllowUnexported(aclEntry{})

// agentUID is the "agent" of these tests: any id works as an ACL entry on
// files the test owns, as root or not.
const agentUID = 54321

func TestWithUserRecomputesMask(t *testing.T) {
	minimal := []aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclOther, 5, aclNoID}}
	got := withUser(minimal, 101000, 7)
	want := []aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclOther, 5, aclNoID}, {aclUser, 7, 101000}, {aclMask, 7, aclNoID}}
	if d := cmp.Diff(want, got, cmpACL); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Granting twice replaces the entry instead of adding a second one.
	again := withUser(got, 101000, 6)
	users := 0
	for _, e := range again {
		if e.tag == aclUser {
			users++
		}
	}
	if users != 1 {
		t.Errorf("two entries for one uid: %v", again)
	}
}

func TestParseAndWriteRoundTrip(t *testing.T) {
	raw := []byte{2, 0, 0, 0, 1, 0, 7, 0, 0xff, 0xff, 0xff, 0xff, 2, 0, 6, 0, 0xe8, 0x8a, 0x01, 0, 4, 0, 5, 0, 0xff, 0xff, 0xff, 0xff}
	acl, err := parseACL(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []aclEntry{{aclUserObj, 7, aclNoID}, {aclUser, 6, 101096}, {aclGroupObj, 5, aclNoID}}
	if d := cmp.Diff(want, acl, cmpACL); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff(raw, encodeACL(acl)); d != "" {
		t.Errorf("encode(parse(raw)) (-want +got):\n%s", d)
	}
	for _, bad := range [][]byte{nil, {1, 0, 0, 0}, {2, 0, 0, 0, 1}} {
		if _, err := parseACL(bad); err == nil {
			t.Errorf("parseACL(%v) accepted", bad)
		}
	}
}

func TestMinimal(t *testing.T) {
	if !minimal([]aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclMask, 7, aclNoID}, {aclOther, 5, aclNoID}}) {
		t.Error("owner/group/mask/other is minimal")
	}
	if minimal([]aclEntry{{aclUser, 7, 5}}) {
		t.Error("a named user is not minimal")
	}
}

func TestPermFromACL(t *testing.T) {
	for _, tc := range []struct {
		name string
		acl  []aclEntry
		want uint32
	}{
		{"no mask", []aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclOther, 4, aclNoID}}, 0o754},
		{"mask narrows group (chmod 745 under group::r-x)", []aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclMask, 4, aclNoID}, {aclOther, 5, aclNoID}}, 0o745},
		{"umask 077 file under a default ACL", []aclEntry{{aclUserObj, 6, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclMask, 6, aclNoID}, {aclOther, 4, aclNoID}}, 0o644},
		{"mask wider than group", []aclEntry{{aclUserObj, 6, aclNoID}, {aclGroupObj, 0, aclNoID}, {aclMask, 7, aclNoID}, {aclOther, 0, aclNoID}}, 0o600},
	} {
		if got := permFromACL(tc.acl); got != tc.want {
			t.Errorf("%s: %04o, want %04o", tc.name, got, tc.want)
		}
	}
}

// newTestGrant grants agentUID the directory ws, with its own lock dir.
func newTestGrant(t *testing.T, ws string, uid, gid uint32) *Grant {
	t.Helper()
	g, err := NewGrant(ws, uid, gid, filepath.Join(t.TempDir(), "grants"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustApply(t *testing.T, g *Grant) GrantReport {
	t.Helper()
	rep, err := g.Apply()
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return rep
}

func mustRevoke(t *testing.T, g *Grant) GrantReport {
	t.Helper()
	rep, err := g.Revoke()
	if err != nil {
		t.Fatalf("revoke: %v", err)
	}
	return rep
}

// fileState is what must not change on a file outside the workspace.
type fileState struct {
	Mode     uint32
	UID, GID uint32
	Access   string
	Default  string
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return fileState{st.Mode, st.Uid, st.Gid, xattrString(path, xattrAccess), xattrString(path, xattrDefault)}
}

func xattrString(path, name string) string {
	buf := make([]byte, 4096)
	n, err := unix.Lgetxattr(path, name, buf)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", buf[:n])
}

// hasUser reports whether path's ACL xattr name has an entry for uid.
func hasUser(t *testing.T, path, name string, uid uint32) bool {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Lgetxattr(path, name, buf)
	if errors.Is(err, unix.ENODATA) {
		return false
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	acl, err := parseACL(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range acl {
		if e.tag == aclUser && e.id == uid {
			return true
		}
	}
	return false
}

// The attack of issue 10: while root grants and revokes, the agent of
// another run swaps a directory of the workspace with a symlink to a
// directory outside (renameat2 RENAME_EXCHANGE), so that a path walk
// resolves ws/a/NAME outside. Nothing outside may change.
func TestGrantRaceWithRenameExchange(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 64 {
		name := fmt.Sprintf("f%02d", i)
		names = append(names, name)
		writeFile(t, filepath.Join(ws, "a", name), 0o644)
		writeFile(t, filepath.Join(outside, name), 0o600)
		if err := os.Mkdir(filepath.Join(outside, name+".d"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(ws, "a", name+".d"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "s")); err != nil {
		t.Fatal(err)
	}
	before := map[string]fileState{}
	for _, n := range names {
		for _, p := range []string{filepath.Join(outside, n), filepath.Join(outside, n+".d")} {
			before[p] = stateOf(t, p)
		}
	}
	before[outside] = stateOf(t, outside)

	var stop atomic.Bool
	var swaps atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		a, s := filepath.Join(ws, "a"), filepath.Join(ws, "s")
		for !stop.Load() {
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, s, unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	g := newTestGrant(t, ws, agentUID, agentUID)
	for range 150 {
		_, _ = g.Apply()  // entries swapped mid-walk are skipped
		_, _ = g.Revoke() // or reported; neither may leave the tree
	}
	stop.Store(true)
	<-done
	if swaps.Load() == 0 {
		t.Fatal("the swapper never swapped; the test proves nothing")
	}
	for p, want := range before {
		if got := stateOf(t, p); got != want {
			t.Errorf("%s outside the workspace changed: %+v, was %+v", p, got, want)
		}
	}
}

// An agent file with mode 2745 under an inherited group::r-x came back from
// teardown -rwxr-sr-x: set-gid, with group exec rebuilt from group_obj
// instead of through the mask. It must come back 0745 and say so. The
// agent here is the test's own uid (given back to itself).
func TestRevokeClearsSetIDAndRestoresGroupThroughMask(t *testing.T) {
	ws := t.TempDir()
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	g := newTestGrant(t, ws, uid, gid)
	mustApply(t, g)
	f := filepath.Join(ws, "tool")
	writeFile(t, f, 0o755)
	if err := unix.Chmod(f, 0o2745); err != nil {
		t.Fatal(err)
	}
	rep := mustRevoke(t, g)
	var st unix.Stat_t
	if err := unix.Lstat(f, &st); err != nil {
		t.Fatal(err)
	}
	if got := st.Mode & 0o7777; got != 0o745 {
		t.Errorf("mode after revoke %04o, want 0745 (no set-gid, group r-- as the mask had it)", got)
	}
	if len(rep.SetIDCleared) != 1 || !strings.Contains(rep.SetIDCleared[0], "tool") {
		t.Errorf("report's set-id list %q, want ./tool", rep.SetIDCleared)
	}
	if xattrString(f, xattrAccess) != "" {
		t.Error("an ACL is left on the file")
	}
}

// A file the agent creates with umask 077 under the default ACL gets
// group::r-x from the directory and mask::rw- from its mode; revoke must
// not hand it back group-executable.
func TestRevokeUmask077FileHasNoGroupExec(t *testing.T) {
	ws := t.TempDir()
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	g := newTestGrant(t, ws, agentUID, agentUID)
	mustApply(t, g)
	old := unix.Umask(0o077)
	err := os.WriteFile(filepath.Join(ws, "secret"), []byte("x"), 0o666)
	unix.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	mustRevoke(t, g)
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(ws, "secret"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o111 != 0 || st.Mode&0o070 > 0o040 {
		t.Errorf("mode after revoke %04o: more than the group r-- the file effectively had, or executable", st.Mode&0o7777)
	}
}

// aclsInChain counts the inodes of a chain made by mkdirChain whose ACL
// has an entry for uid, walking it by fds.
func aclsInChain(t *testing.T, dir string, depth int, uid uint32) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	has := func(fd int, name string) bool {
		buf := make([]byte, 4096)
		n, err := unix.Fgetxattr(fd, name, buf)
		if err != nil {
			return false
		}
		acl, _ := parseACL(buf[:n])
		return !minimal(acl) && len(withoutUser(acl, uid)) < len(acl)
	}
	for i := range depth {
		f, err := unix.Openat(fd, "file", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if has(f, xattrAccess) {
			count++
		}
		unix.Close(f)
		next, err := unix.Openat(fd, longName(i), unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
		if has(fd, xattrAccess) && has(fd, xattrDefault) {
			count++
		}
	}
	unix.Close(fd)
	return count
}

// A chain of 40 directories with 200-byte names is longer than PATH_MAX;
// a path walk fails on it (and left the agent's files behind, and every
// later run exiting 4). The fd walk grants and revokes all of it.
func TestGrantDeepTreeBeyondPathMax(t *testing.T) {
	ws := t.TempDir()
	made := mkdirChain(t, ws, 40, longName)
	g := newTestGrant(t, ws, agentUID, agentUID)
	rep := mustApply(t, g)
	if rep.Walked != made+1 {
		t.Errorf("grant walked %d inodes, want %d", rep.Walked, made+1)
	}
	if got := aclsInChain(t, ws, 40, agentUID); got != made {
		t.Errorf("%d of %d inodes granted", got, made)
	}
	mustRevoke(t, g)
	if got := aclsInChain(t, ws, 40, agentUID); got != 0 {
		t.Errorf("%d inodes still granted after revoke", got)
	}
}

// Symlinks in the tree, to a file and to a directory outside, are never
// followed: neither target changes, and the walk does not descend.
func TestGrantNeverFollowsSymlinks(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	writeFile(t, secret, 0o600)
	for name, target := range map[string]string{"to-file": secret, "to-dir": outside, "dangling": "/nonexistent/x"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	before, dirBefore := stateOf(t, secret), stateOf(t, outside)
	g := newTestGrant(t, ws, agentUID, agentUID)
	rep := mustApply(t, g)
	mustRevoke(t, g)
	if rep.Walked != 4 {
		t.Errorf("walked %d inodes, want 4 (the root and three links, not what they point to)", rep.Walked)
	}
	if got := stateOf(t, secret); got != before {
		t.Errorf("file behind a symlink changed: %+v, was %+v", got, before)
	}
	if got := stateOf(t, outside); got != dirBefore {
		t.Errorf("directory behind a symlink changed: %+v, was %+v", got, dirBefore)
	}
}

// A FIFO in the tree, before the grant and created under it (so carrying
// the agent's inherited entry), neither hangs the walk nor keeps the entry.
func TestWalkDoesNotHangOnFIFO(t *testing.T) {
	ws := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(ws, "before"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newTestGrant(t, ws, agentUID, agentUID)
	inTime(t, 10*time.Second, "grant", func() error { _, err := g.Apply(); return err })
	fifo := filepath.Join(ws, "under-grant")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	if !hasUser(t, fifo, xattrAccess, agentUID) {
		t.Fatal("the FIFO did not inherit the agent's entry; the test proves nothing about revoking it")
	}
	inTime(t, 10*time.Second, "revoke", func() error { _, err := g.Revoke(); return err })
	if hasUser(t, fifo, xattrAccess, agentUID) {
		t.Error("the FIFO keeps the agent's entry")
	}
}

// A grant waits for the workspace's lock, which lives in the lock
// directory (keyed by device and inode), not in the workspace.
func TestGrantWaitsForWorkspaceLock(t *testing.T) {
	ws := t.TempDir()
	g := newTestGrant(t, ws, agentUID, agentUID)
	if err := os.MkdirAll(g.LockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(g.LockDir, fmt.Sprintf("%d-%d.lock", g.Dev, g.Ino)), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := g.Apply(); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("the grant ran while another held the workspace's lock (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if hasUser(t, ws, xattrAccess, agentUID) {
		t.Fatal("the grant wrote an ACL while another held the lock")
	}
	lock.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the grant did not run once the lock was free")
	}
	if !hasUser(t, ws, xattrAccess, agentUID) {
		t.Error("no grant after the lock was released")
	}
}

// Two runs granting one workspace at once read and rewrite the same ACLs;
// serialised, neither loses the other's entry.
func TestConcurrentGrantsKeepBothEntries(t *testing.T) {
	ws := t.TempDir()
	for i := range 200 {
		writeFile(t, filepath.Join(ws, fmt.Sprintf("f%03d", i)), 0o644)
	}
	locks := filepath.Join(t.TempDir(), "grants")
	var wg sync.WaitGroup
	for _, uid := range []uint32{agentUID, agentUID + 1} {
		g, err := NewGrant(ws, uid, uid, locks)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for range 5 {
				if _, err := g.Apply(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range 200 {
		p := filepath.Join(ws, fmt.Sprintf("f%03d", i))
		if !hasUser(t, p, xattrAccess, agentUID) || !hasUser(t, p, xattrAccess, agentUID+1) {
			t.Fatalf("%s lost one run's entry", p)
		}
	}
}

// A workspace deleted since the grant has nothing to revoke, and that is
// not an error (gc would otherwise keep the run forever); one replaced by
// another directory or a symlink is not touched.
func TestRevokeWorkspaceGoneOrReplaced(t *testing.T) {
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	for _, tc := range []struct {
		name    string
		replace func() error
		note    string
	}{
		{"removed", func() error { return os.RemoveAll(ws) }, "no longer exists"},
		{"another directory", func() error {
			if err := os.RemoveAll(ws); err != nil {
				return err
			}
			if err := os.Mkdir(ws, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(ws, "f"), nil, 0o644)
		}, "replaced"},
		{"a symlink", func() error {
			if err := os.RemoveAll(ws); err != nil {
				return err
			}
			return os.Symlink(t.TempDir(), ws)
		}, "replaced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.RemoveAll(ws)
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			g := newTestGrant(t, ws, agentUID, agentUID)
			mustApply(t, g)
			if err := tc.replace(); err != nil {
				t.Fatal(err)
			}
			var before fileState
			if tc.name == "another directory" {
				before = stateOf(t, filepath.Join(ws, "f"))
			}
			rep, err := g.Revoke()
			if err != nil || !strings.Contains(rep.Note, tc.note) {
				t.Errorf("revoke: %v, note %q; want no error and a note saying %q", err, rep.Note, tc.note)
			}
			if tc.name == "another directory" && stateOf(t, filepath.Join(ws, "f")) != before {
				t.Error("revoke changed a directory it did not grant")
			}
		})
	}
}

// setACL sets path's ACL xattr name to acl, as setfacl would.
func setACL(t *testing.T, path, name string, acl []aclEntry) {
	t.Helper()
	if err := unix.Setxattr(path, name, encodeACL(acl), 0); err != nil {
		t.Fatal(err)
	}
}

// aclOf reads path's ACL xattr name (nil when there is none).
func aclOf(t *testing.T, path, name string) []aclEntry {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Lgetxattr(path, name, buf)
	if errors.Is(err, unix.ENODATA) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	acl, err := parseACL(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	return acl
}

// What the agent setfacl'd on its own files (user:SOMEONE:rwx on a
// script, a default entry on a directory) must not outlive the run; what
// they inherited from the owner's own default ACL stays, and a mask the
// agent narrowed is not widened again.
func TestRevokeDropsACLEntriesTheAgentAdded(t *testing.T) {
	ws := t.TempDir()
	const inherited, planted = 4321, 1234
	base := []aclEntry{{aclUserObj, 7, aclNoID}, {aclGroupObj, 5, aclNoID}, {aclOther, 5, aclNoID}}
	setACL(t, ws, xattrDefault, withUser(base, inherited, 5))
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	g := newTestGrant(t, ws, uid, gid)
	mustApply(t, g)
	script, dir := filepath.Join(ws, "script"), filepath.Join(ws, "dir")
	writeFile(t, script, 0o755)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The agent adds an entry of its own, and narrows the mask to r--.
	acl := withUser(aclOf(t, script, xattrAccess), planted, 7)
	for i := range acl {
		if acl[i].tag == aclMask {
			acl[i].perm = 4
		}
	}
	setACL(t, script, xattrAccess, acl)
	setACL(t, dir, xattrDefault, withUser(aclOf(t, dir, xattrDefault), planted, 7))
	rep := mustRevoke(t, g)
	for _, p := range []string{script, dir} {
		for _, name := range []string{xattrAccess, xattrDefault} {
			got := aclOf(t, p, name)
			if _, ok := namedPerm(got, aclUser, planted); ok {
				t.Errorf("%s %s keeps the agent's user:%d entry: %v", filepath.Base(p), name, planted, got)
			}
		}
	}
	got := aclOf(t, script, xattrAccess)
	if p, ok := namedPerm(got, aclUser, inherited); !ok || p != 5 {
		t.Errorf("the inherited user:%d entry is %v (%o), want r-x kept: %v", inherited, ok, p, got)
	}
	if m, _ := namedPerm(got, aclMask, aclNoID); m != 4 {
		t.Errorf("mask %o after revoke, want the agent's r-- kept, not widened", m)
	}
	if rep.AgentACLEntries != 2 {
		t.Errorf("report counts %d planted entries removed, want 2", rep.AgentACLEntries)
	}
}
