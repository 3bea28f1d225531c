//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentbox/agentbox/selftest"
	"golang.org/x/sys/unix"
)

// startAgent has the waiting starter start the agent's command, which it
// got ahead (starter.become) and prepared: the starter, already the agent's
// uid in its own process group (the terminal's foreground one), applies the
// Landlock rulesets it made to itself and then executes the agent. Only the agent is confined, in one Landlock domain, and init stays
// outside it so that it can always signal the agent. (Confining init instead
// puts each of its threads in a domain of its own, and signal scoping then
// refuses init's signals to the agent.) It returns the agent's Landlock
// status, or the exit code init should use when it fails.
func startAgent(s *starter, c selftest.Command) (selftest.LandlockStatus, int, error) {
	var none selftest.LandlockStatus
	if len(c.Args) == 0 {
		s.kill()
		return none, selftest.ExitCannotExec, errors.New("the config names no agent command (agent.args)")
	}
	st := s.start()
	if st.Error != "" {
		s.reap()
		return none, st.Code, errors.New(st.Error)
	}
	return st.Landlock, 0, nil
}

// reapPid collects one exited child and returns how it ended.
func reapPid(pid int) unix.WaitStatus {
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); !errors.Is(err, unix.EINTR) {
			tree.forget(pid)
			return ws
		}
	}
}

// lookPath finds name in the PATH of env (not init's own environment), as
// the agent: the starter looks it up once it runs under the agent's ids.
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
var forwarded = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1,
	unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT, unix.SIGALRM,
}

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
		tree.forget(pid)
		if pid != agent {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal()), true
		}
		return ws.ExitStatus(), true
	}
}
