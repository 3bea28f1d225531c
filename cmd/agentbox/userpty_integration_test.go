//go:build integration && linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// testPty is a pty the test opens and runs the launcher on, as a user's
// terminal: the test types into the master and reads what it shows.
type testPty struct {
	master, slave *os.File
	mu            sync.Mutex
	out           bytes.Buffer
}

func openTestPty(t *testing.T, rows, cols uint16) *testPty {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	s, _, en := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if en != 0 {
		t.Fatal(en)
	}
	p := &testPty{master: os.NewFile(uintptr(m), "master"), slave: os.NewFile(s, "slave")}
	t.Cleanup(func() { p.master.Close(); p.slave.Close() })
	p.resize(t, rows, cols)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := p.master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *testPty) resize(t *testing.T, rows, cols uint16) {
	t.Helper()
	if err := unix.IoctlSetWinsize(int(p.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatal(err)
	}
}

func (p *testPty) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.ReplaceAll(p.out.String(), "\r", "")
}

// waitFor waits until the terminal shows want.
func (p *testPty) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal did not show %q within 60s:\n%s", want, p.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// userTTYScript is the agent on a terminal: which one it has, whether any
// of its fds is the launcher's terminal, its size before and after the
// window changes, and the ^C typed on the user's terminal.
const userTTYScript = `
t=$(tty); echo "tty=$t"; echo "owner=$(stat -c %U "$t")"
leak=none; for f in /proc/$$/fd/*; do [ "$(readlink "$f")" = "$HOSTPTS" ] && leak=$f; done; echo "leak=$leak"
echo "size=$(stty size)"
trap 'echo "resized=$(stty size)"' WINCH
trap 'echo got-int; exit 7' INT
echo ready
while :; do sleep 0.1; done
`

// With a terminal, --isolation user gives the agent a fresh pty of its
// own, owned by the account (never the launcher's terminal, which would let
// it inject keystrokes into the user's shell), sized like the user's
// window and following it; ^C typed on the user's terminal reaches the
// agent, and the user's terminal modes are restored at the end. The first
// bytes the user's terminal shows from the run are the agent's own.
func TestIsolationUserTerminalAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	bin := agentboxBin // TestMain's static build: --isolation user compiles its filter in pure Go
	env := isolatedEnv(t)
	setupUser(t, bin, env)
	ws := userWorkspace(t)
	p := openTestPty(t, 45, 123)
	hostPts, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", p.slave.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	// A ^D typed ahead: the terminal, canonical until the launcher makes it
	// raw, holds it as an end-of-file mark, which a raw read returns as a
	// NUL. It must reach the agent as ^D, not as a NUL its pty echoes as ^@.
	if _, err := p.master.Write([]byte{0x04}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--isolation", "user", "--env", "HOSTPTS", "--", "bash", "-c", userTTYScript)
	cmd.Env, cmd.Dir = append(env, "HOSTPTS="+hostPts), ws
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.slave, p.slave, p.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done, exited := make(chan error, 1), make(chan struct{})
	go func() { done <- cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// A test that failed midway: end the run, and take down what a
		// killed launcher leaves (the fence would drop the next run's
		// gateway) before the account is removed.
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Kill()
		<-exited
		gc := exec.Command(bin, "gc")
		gc.Env = env
		if out, err := gc.CombinedOutput(); err != nil {
			t.Errorf("agentbox gc: %v\n%s", err, out)
		}
	})
	p.waitFor(t, "ready\n")
	p.resize(t, 30, 100)
	p.waitFor(t, "resized=30 100\n")
	if _, err := p.master.Write([]byte{0x03}); err != nil { // ^C
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the launcher did not end after ^C:\n%s", p.text())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("launcher: %v, want exit 7 (the agent's trap on SIGINT)\n%s", err, p.text())
	}
	checkStartsWithAgent(t, p.text(), "tty=/dev/pts/")
	obs := observations(p.text())
	if !strings.HasPrefix(obs["tty"], "/dev/pts/") || obs["tty"] == hostPts {
		t.Errorf("the agent's tty is %q, the launcher's %s: want a fresh /dev/pts one\n%s", obs["tty"], hostPts, p.text())
	}
	for k, want := range map[string]string{"owner": "agentbox-agent", "leak": "none", "size": "45 123"} {
		if obs[k] != want {
			t.Errorf("%s=%q, want %q\n%s", k, obs[k], want, p.text())
		}
	}
	if !strings.Contains(p.text(), "got-int\n") {
		t.Errorf("the agent did not see the ^C:\n%s", p.text())
	}
	after, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag || after.Cflag != before.Cflag {
		t.Errorf("the terminal was not restored: lflag %#x→%#x iflag %#x→%#x oflag %#x→%#x", before.Lflag, after.Lflag, before.Iflag, after.Iflag, before.Oflag, after.Oflag)
	}
	rec := lastRecord(t, env)
	for _, r := range rec.Residuals {
		if r.Code == "user-no-terminal" {
			t.Errorf("the run with a pty records %s: %s", r.Code, r.Detail)
		}
	}
}

// userProtectScript tries each protected path of the workspace, a socket
// the host listens on in it, and the workspace's other files.
const userProtectScript = `
try() { k=$1; shift; if out=$( { "$@"; } 2>&1 ); then echo "$k=ok"; else echo "$k=${out##*: }"; fi; }
try yaml sh -c 'echo "runtime: /tmp/evil" >> agentbox.yaml'
try hook sh -c 'printf "#!/bin/sh\ntouch /tmp/pwned\n" > .git/hooks/pre-commit'
try config sh -c 'printf "\tfsmonitor = touch /tmp/pwned\n" >> .git/config'
try info sh -c 'echo "* filter=x" > .git/info/attributes'
try rm_yaml rm -f agentbox.yaml
try mv_hooks mv .git/hooks .git/hooks.old
try socket python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect("host.sock")'
try other sh -c 'echo notes > notes.txt'
try top_mkdir mkdir newdir
try git_lock sh -c 'echo x > .git/index.lock && mv .git/index.lock .git/index'
try existing sh -c 'echo changed > README'
`

// In --isolation user, agentbox-init binds the workspace's protected paths
// (and covers its sockets) read-only in a mount namespace of the agent's
// own, as the runtime engine does: writing, replacing, removing or
// renaming them fails, connecting to the socket is refused, and the rest
// of the workspace, .git included, stays writable.
func TestIsolationUserProtectedPathsAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "python3", "python3")
	bin := agentboxBin // TestMain's static build: --isolation user compiles its filter in pure Go
	env := isolatedEnv(t)
	setupUser(t, bin, env)
	ws := userWorkspace(t)
	for _, d := range []string{".git/hooks", ".git/info"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"agentbox.yaml": "# the workspace's policy\n", ".git/config": "[core]\n", "README": "readme\n"}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", filepath.Join(ws, "host.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	if err := os.Chmod(filepath.Join(ws, "host.sock"), 0o777); err != nil {
		t.Fatal(err)
	}
	trust := exec.Command(bin, "trust")
	trust.Env, trust.Dir = env, ws
	if out, err := trust.CombinedOutput(); err != nil {
		t.Fatalf("agentbox trust: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "run", "--isolation", "user", "--", "bash", "-c", userProtectScript)
	cmd.Env, cmd.Dir = env, ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentbox run --isolation user: %v\n%s", err, out)
	}
	obs := observations(string(out))
	for k, want := range map[string]string{
		"yaml": "Read-only file system", "hook": "Read-only file system", "config": "Read-only file system", "info": "Read-only file system",
		"rm_yaml": "Device or resource busy", "mv_hooks": "Device or resource busy",
		"other": "ok", "top_mkdir": "ok", "git_lock": "ok", "existing": "ok",
	} {
		if obs[k] != want {
			t.Errorf("%s = %q, want %q\n%s", k, obs[k], want, out)
		}
	}
	// The cover, an empty file of mode 0444, refuses the connect: EACCES
	// for a uid that may not write it (ECONNREFUSED for one that may).
	if obs["socket"] != "[Errno 13] Permission denied" && obs["socket"] != "[Errno 111] Connection refused" {
		t.Errorf("socket = %q, want a refusal\n%s", obs["socket"], out)
	}
	select {
	case <-accepted:
		t.Error("the host's socket in the workspace accepted a connection from the agent")
	default:
	}
	for name, data := range files {
		if name == "README" {
			data = "changed\n"
		}
		if got, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(got) != data {
			t.Errorf("%s on the host: %q, %v; want %q", name, got, err, data)
		}
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/info/attributes", ".git/hooks.old"} {
		if exists(filepath.Join(ws, p)) {
			t.Errorf("%s exists on the host", p)
		}
	}
	rec := lastRecord(t, env)
	for _, r := range rec.Residuals {
		if r.Code == "user-no-protected-paths" {
			t.Errorf("the run records %s: %s", r.Code, r.Detail)
		}
	}
}
