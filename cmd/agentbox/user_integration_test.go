//go:build integration && linux

package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// userScript is the agent of --isolation user: what it is, what it sees,
// and what it reaches (bash's /dev/tcp, one connect each).
const userScript = `
echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"
cat /root/.bashrc >/dev/null 2>&1 && echo "root_home=readable" || echo "root_home=unreadable"
cat "$CANARY_FILE" >/dev/null 2>&1 && echo "canary_file=readable" || echo "canary_file=unreadable"
echo "canary_env=${AGENTBOX_CANARY_SECRET:-absent}"
gw=${AGENTBOX_GATEWAY_URL##*:}
for a in 127.0.0.1/$gw ::1/$gw 127.0.0.1/$PORT4 ::1/$PORT6; do
  (exec 3<>/dev/tcp/$a) 2>/dev/null && echo "tcp $a=connected" || echo "tcp $a=refused"
done
echo written > written-by-agent && echo "ws_write=ok"
echo "seccomp=$(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status)"
setarch "$(uname -m)" -R true 2>/dev/null && echo "personality(ADDR_NO_RANDOMIZE)=allowed" || echo "personality(ADDR_NO_RANDOMIZE)=refused"
`

// userWorkspace is a workspace the account can reach once granted: below
// /tmp, in a directory everyone may search.
func userWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := os.MkdirTemp("", "abws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

// countingListener accepts on network and address and counts what it
// accepted, for the test's check that the agent reached none of them.
func countingListener(t *testing.T, network, addr string) (int, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, &n
}

// setupUser makes the account with agentbox setup-user, holding the
// account lock for the test, and removes it again at the end when the test
// made it (account's own tests need the machine without it).
func setupUser(t *testing.T, bin string, env []string) *user.User {
	t.Helper()
	testutil.LockAccount(t)
	if _, err := user.Lookup("agentbox-agent"); err != nil {
		t.Cleanup(func() {
			rm := exec.Command(bin, "setup-user", "--remove")
			rm.Env = env
			if out, err := rm.CombinedOutput(); err != nil {
				t.Errorf("agentbox setup-user --remove: %v\n%s", err, out)
			}
		})
	}
	cmd := exec.Command(bin, "setup-user")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agentbox setup-user: %v\n%s", err, out)
	}
	u, err := user.Lookup("agentbox-agent")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestIsolationUserAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	bin := agentboxBin // TestMain's static build: --isolation user compiles its filter in pure Go
	env := isolatedEnv(t)
	u := setupUser(t, bin, env)
	ws := userWorkspace(t)
	canary := plantHomeCanary(t)
	port4, hits4 := countingListener(t, "tcp4", "127.0.0.1:0")
	port6, hits6 := countingListener(t, "tcp6", "[::1]:0")
	runEnv := append(env, "CANARY_FILE="+canary, "AGENTBOX_CANARY_SECRET=leaked", fmt.Sprintf("PORT4=%d", port4), fmt.Sprintf("PORT6=%d", port6))
	cmd := exec.Command(bin, "run", "--isolation", "user", "--env", "CANARY_FILE", "--env", "PORT4", "--env", "PORT6", "--", "bash", "-c", userScript)
	cmd.Env, cmd.Dir = runEnv, ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentbox run --isolation user: %v\n%s", err, out)
	}
	got := string(out)
	gw := "" // the gateway's port, from the lines the agent printed
	for _, want := range []string{
		"uid=" + u.Uid + " gid=" + u.Gid + " groups=" + u.Gid,
		"root_home=unreadable", "canary_file=unreadable", "canary_env=absent",
		fmt.Sprintf("tcp 127.0.0.1/%d=refused", port4), fmt.Sprintf("tcp ::1/%d=refused", port6),
		"ws_write=ok", "seccomp=2", "personality(ADDR_NO_RANDOMIZE)=refused", // the profile, compiled without cgo
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("the agent did not print %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if rest, ok := strings.CutPrefix(line, "tcp 127.0.0.1/"); ok && !strings.HasPrefix(rest, strconv.Itoa(port4)) {
			gw = rest
		}
	}
	if !strings.HasSuffix(gw, "=connected") || !strings.Contains(got, "tcp ::1/"+gw+"\n") {
		t.Errorf("the gateway was not reached over IPv4 and IPv6 (%q):\n%s", gw, got)
	}
	if n4, n6 := hits4.Load(), hits6.Load(); n4+n6 != 0 {
		t.Errorf("the test's listeners accepted %d (IPv4) and %d (IPv6) connections: the fence let the agent through", n4, n6)
	}
	// The agent's file is the invoker's to read afterwards.
	if data, err := os.ReadFile(filepath.Join(ws, "written-by-agent")); err != nil || string(data) != "written\n" {
		t.Errorf("the agent's file in the workspace: %q, %v", data, err)
	}
	checkNoUserResidue(t, u, ws, lastRecord(t, env).RunID)
}

func TestIsolationUserGCAfterSIGKILLAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	bin := agentboxBin // TestMain's static build: --isolation user compiles its filter in pure Go
	env := isolatedEnv(t)
	u := setupUser(t, bin, env)
	ws := userWorkspace(t)
	cmd := exec.Command(bin, "run", "--isolation", "user", "--", "sh", "-c", "echo > ready; exec sleep 120")
	cmd.Env, cmd.Dir = env, ws
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the agent did not start within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	gc := exec.Command(bin, "gc")
	gc.Env = env
	if out, err := gc.CombinedOutput(); err != nil {
		t.Fatalf("agentbox gc: %v\n%s", err, out)
	}
	checkNoUserResidue(t, u, ws, lastRecord(t, env).RunID)
}

// checkNoUserResidue: no process of the account, no fence table of
// agentbox's, no ACL on the workspace, no cgroup of the run (other
// packages' tests run sandboxes of their own meanwhile, each in a cgroup
// of its run id).
func checkNoUserResidue(t *testing.T, u *user.User, ws, runID string) {
	t.Helper()
	// Zombies are dead, awaiting a parent that reaps them (the launcher,
	// their subreaper, was killed): only live processes count.
	if out, err := exec.Command("pgrep", "-u", u.Uid, "-r", "R,S,D,T,t,I").Output(); err == nil {
		t.Errorf("processes of %s remain: %s", u.Username, out)
	}
	tables, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tables), "agentbox-") {
		t.Errorf("a fence table remains:\n%s", tables)
	}
	for _, p := range []string{ws, filepath.Join(ws, "written-by-agent"), filepath.Join(ws, "ready")} {
		buf := make([]byte, 256)
		_, err := unix.Getxattr(p, "system.posix_acl_access", buf)
		if err == nil {
			t.Errorf("%s still has an ACL", p)
		} else if !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOENT) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if runID == "" {
		t.Fatal("no run id in the ledger to look for the run's cgroups")
	}
	for _, h := range []string{"", "unified", "memory", "pids", "cpu,cpuacct"} {
		if p := filepath.Join("/sys/fs/cgroup", h, "agentbox", runID); exists(p) {
			t.Errorf("the run's cgroup remains: %s", p)
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
