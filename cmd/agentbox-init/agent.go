package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentbox/agentbox/selftest"
	"golang.org/x/sys/unix"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// startAgent starts the agent as init's child, in its own process group,
// which becomes the terminal's foreground group when stdin is a terminal.
// It returns the exit code init should use when it fails.
func startAgent(c selftest.Command) (int, int, error) {
	if len(c.Args) == 0 {
		return 0, selftest.ExitCannotExec, errors.New("the config names no agent command (agent.args)")
	}
	path, err := lookPath(c.Args[0], c.Env)
	if err != nil {
		return 0, selftest.ExitNotFound, err
	}
	sys := &syscall.SysProcAttr{Setpgid: true}
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		sys.Foreground, sys.Ctty = true, 0
	}
	pid, err := syscall.ForkExec(path, c.Args, &syscall.ProcAttr{
		Dir: dirOrRoot(c.Dir), Env: c.Env, Files: []uintptr{0, 1, 2}, Sys: sys,
	})
	if err != nil {
		return 0, selftest.ExitCannotExec, fmt.Errorf("exec %s: %w", path, err)
	}
	return pid, 0, nil
}

// lookPath finds name in the PATH of env (not init's own environment).
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathVar := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in the agent's PATH %s", name, pathVar)
}

// forwarded are the signals init passes on to the agent.
var forwarded = []os.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1,
	unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT, unix.SIGALRM}

// supervisor receives signals from before the agent starts, so none is lost.
type supervisor struct{ sigs chan os.Signal }

func newSupervisor() *supervisor {
	s := &supervisor{sigs: make(chan os.Signal, 32)}
	signal.Notify(s.sigs, append(forwarded, unix.SIGCHLD)...)
	return s
}

// supervise forwards signals to pid and reaps every child until pid exits;
// it returns pid's exit code, 128+N when signal N killed it.
func (s *supervisor) supervise(pid int) int {
	for {
		if code, done := reap(pid); done {
			return code
		}
		sig := <-s.sigs
		if sig != unix.SIGCHLD {
			_ = unix.Kill(pid, sig.(syscall.Signal))
		}
	}
}

// reap collects every exited child without blocking and reports the agent's
// exit code once the agent is among them.
func reap(agent int) (int, bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return 0, false
		}
		if pid != agent {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal()), true
		}
		return ws.ExitStatus(), true
	}
}
