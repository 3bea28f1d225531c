package main

import (
	"bytes"
	"encoding/json"
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
// The child is init itself (--exec-agent), which applies the Landlock plan
// to itself and then executes the agent: only the agent is confined, in one
// Landlock domain, and init stays outside it so that it can always signal
// the agent. (Confining init instead puts each of its threads in a domain
// of its own, and signal scoping then refuses init's signals to the agent.)
// It returns the agent's pid and Landlock status, or the exit code init
// should use when it fails.
func startAgent(c selftest.Command, plan *selftest.LandlockPlan) (int, selftest.LandlockStatus, int, error) {
	var none selftest.LandlockStatus
	if len(c.Args) == 0 {
		return 0, none, selftest.ExitCannotExec, errors.New("the config names no agent command (agent.args)")
	}
	path, err := lookPath(c.Args[0], c.Env)
	if err != nil {
		return 0, none, selftest.ExitNotFound, err
	}
	req := execRequest{Path: path, Args: c.Args, Env: c.Env, Landlock: plan}
	pid, status, err := spawnExecAgent(req, dirOrRoot(c.Dir))
	if err != nil {
		return 0, none, selftest.ExitCannotExec, err
	}
	if status.Error != "" {
		reapPid(pid)
		return 0, none, status.Code, errors.New(status.Error)
	}
	return pid, status.Landlock, 0, nil
}

// execRequest is what init sends its --exec-agent child on fd 3.
type execRequest struct {
	Path     string                 `json:"path"`
	Args     []string               `json:"args"`
	Env      []string               `json:"env"`
	Landlock *selftest.LandlockPlan `json:"landlock,omitempty"`
}

// execStatus is what the child reports on fd 4 before it executes the
// agent (the exec closes fd 4); a later message reports a failed exec.
type execStatus struct {
	Landlock selftest.LandlockStatus `json:"landlock"`
	Error    string                  `json:"error,omitempty"`
	Code     int                     `json:"code,omitempty"`
}

// spawnExecAgent starts `agentbox-init --exec-agent` and returns once the
// agent has been executed (or the child has failed).
func spawnExecAgent(req execRequest, dir string) (int, execStatus, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return 0, execStatus{}, err
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return 0, execStatus{}, err
	}
	sys := &syscall.SysProcAttr{Setpgid: true}
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		sys.Foreground, sys.Ctty = true, 0
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"agentbox-init", "--exec-agent"}, &syscall.ProcAttr{
		Dir: dir, Env: req.Env, Files: []uintptr{0, 1, 2, reqR.Fd(), stW.Fd()}, Sys: sys,
	})
	reqR.Close()
	stW.Close()
	defer stR.Close()
	if err != nil {
		reqW.Close()
		return 0, execStatus{}, fmt.Errorf("start the agent: %w", err)
	}
	err = json.NewEncoder(reqW).Encode(req)
	reqW.Close()
	if err != nil {
		return pid, execStatus{}, fmt.Errorf("send the agent's command: %w", err)
	}
	st := execStatus{Error: "the agent's starter exited without a word", Code: selftest.ExitCannotExec}
	dec := json.NewDecoder(stR)
	for {
		var m execStatus
		if err := dec.Decode(&m); err != nil {
			break // EOF: the exec closed the pipe, or the child is gone
		}
		st = m
	}
	return pid, st, nil
}

// execAgentMain is the --exec-agent child: apply Landlock, report, exec.
func execAgentMain() int {
	unix.CloseOnExec(4)
	status := json.NewEncoder(os.NewFile(4, "status"))
	var req execRequest
	if err := json.NewDecoder(os.NewFile(3, "request")).Decode(&req); err != nil {
		_ = status.Encode(execStatus{Error: "read the agent's command: " + err.Error(), Code: selftest.ExitInitFailed})
		return selftest.ExitInitFailed
	}
	unix.Close(3)
	ll, err := selftest.ApplyLandlock(req.Landlock)
	if err != nil {
		_ = status.Encode(execStatus{Error: "landlock: " + err.Error(), Code: selftest.ExitInitFailed})
		return selftest.ExitInitFailed
	}
	_ = status.Encode(execStatus{Landlock: ll})
	err = syscall.Exec(req.Path, req.Args, req.Env)
	_ = status.Encode(execStatus{Error: fmt.Sprintf("exec %s: %v", req.Path, err), Code: selftest.ExitCannotExec})
	return selftest.ExitCannotExec
}

// reapPid collects one exited child.
func reapPid(pid int) {
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); !errors.Is(err, unix.EINTR) {
			return
		}
	}
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
		if pid != agent {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal()), true
		}
		return ws.ExitStatus(), true
	}
}
