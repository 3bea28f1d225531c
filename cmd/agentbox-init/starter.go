//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/selftest"
)

// A starter is a child of init (this binary, --exec-agent) that has become
// the agent and waits to execute a program: the probes first, then the
// agent itself. It is the only way init starts anything, so nothing runs
// under init's ids or with init's capabilities.
//
// Init writes two JSON lines on the child's fd 3: a becomeRequest, which
// the child answers on fd 4 with an execStatus ("ready", or an error), and
// then an execRequest, or EOF when nothing is to be started. The child
// reads the second only once it is the agent, so init may write both at
// once (it does for the probe process, which it starts before it has the
// configuration). The child
// confines itself with the request's Landlock plan, reports that, and
// executes the program; the exec closes fd 4 (close-on-exec), and a failed
// exec is one more execStatus. Between "ready" and the request the child
// already runs with the agent's credentials, so the launcher verifies
// exactly those from the host before it lets the agent start.

// becomeRequest names who the child becomes (nil: init's own ids) and
// whether it takes the sandbox's terminal on fd 0 along.
type becomeRequest struct {
	User     *selftest.Credential `json:"user,omitempty"`
	Terminal bool                 `json:"terminal,omitempty"`
	// Seccomp is the filter the child loads once it is User
	// (selftest.Command.Seccomp).
	Seccomp []byte `json:"seccomp,omitempty"`
	// Protect are the read-only binds the child makes, as root and in its
	// own mount namespace, before it becomes User (selftest.Command.Protect).
	Protect *selftest.Protect `json:"protect,omitempty"`
}

// execRequest is the program the child executes: Args[0] is looked up in
// the PATH of Env when it has no slash. With Probes instead, the child
// runs the probes of that configuration itself (see probeInPlace). With
// Hold, the child prepares everything (the directory, the path, the
// Landlock rulesets) and then waits for a startLine before it confines
// itself and executes the program.
type execRequest struct {
	Args     []string               `json:"args"`
	Env      []string               `json:"env"`
	Dir      string                 `json:"dir,omitempty"`
	Landlock *selftest.LandlockPlan `json:"landlock,omitempty"`
	Probes   *selftest.InitConfig   `json:"probes,omitempty"`
	Hold     bool                   `json:"hold,omitempty"`
}

// startLine is init's word to a held child: execute the program now.
type startLine struct {
	Start bool `json:"start"`
}

// execStatus is one report of the child.
type execStatus struct {
	Ready    bool                    `json:"ready,omitempty"`
	Landlock selftest.LandlockStatus `json:"landlock"`
	Error    string                  `json:"error,omitempty"`
	Code     int                     `json:"code,omitempty"`
}

// starter is init's handle on one such child.
type starter struct {
	pid    int
	req    *os.File
	status *json.Decoder
	close  func()
}

// startAs starts a child with stdio as its fds 0, 1 and 2, in a process
// group of its own, in / (init's uid need not reach the workspace; the child
// changes into the program's directory once it is the agent), and returns
// once it has become u. With tty, fd 0 is the sandbox's terminal: the child
// becomes its foreground group and its owner. With protect, the child starts
// in a mount namespace of its own and makes those binds first.
func startAs(u *selftest.Credential, filter []byte, env []string, stdio [3]uintptr, tty bool, protect *selftest.Protect) (*starter, error) {
	s, err := spawn(env, stdio, tty, protect)
	if err != nil {
		return nil, err
	}
	if err := s.send(becomeRequest{User: u, Terminal: tty, Seccomp: filter, Protect: protect}); err != nil {
		s.kill()
		return nil, fmt.Errorf("tell the child who to become: %w", err)
	}
	if err := s.awaitReady(); err != nil {
		return nil, err
	}
	return s, nil
}

// spawn starts the child (see startAs), which then waits to be told who
// to become: its Go start-up can overlap what init does meanwhile.
func spawn(env []string, stdio [3]uintptr, tty bool, protect *selftest.Protect) (*starter, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, err
	}
	sys := &syscall.SysProcAttr{Setpgid: true, Foreground: tty}
	if protect != nil && len(protect.Binds) > 0 {
		sys.Unshareflags = syscall.CLONE_NEWNS // and "/" made rprivate by Go
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"agentbox-init", "--exec-agent"}, &syscall.ProcAttr{
		Dir: "/", Env: env, Files: []uintptr{stdio[0], stdio[1], stdio[2], reqR.Fd(), stW.Fd()}, Sys: sys,
	})
	reqR.Close()
	stW.Close()
	if err != nil {
		reqW.Close()
		stR.Close()
		return nil, fmt.Errorf("start a child: %w", err)
	}
	tree.add(pid)
	return &starter{pid: pid, req: reqW, status: json.NewDecoder(stR), close: func() { stR.Close() }}, nil
}

// send writes one request line to the child; a child that is gone makes it
// fail, and its status says why.
func (s *starter) send(v any) error { return json.NewEncoder(s.req).Encode(v) }

// awaitReady waits for the child's answer to its becomeRequest; a child
// that failed is collected and its error returned.
func (s *starter) awaitReady() error {
	var st execStatus
	if err := s.status.Decode(&st); err != nil || !st.Ready {
		s.kill()
		if st.Error == "" {
			st.Error = fmt.Sprintf("the child exited without a word (%v)", err)
		}
		return errors.New(st.Error)
	}
	return nil
}

// awaitExec reads the child's statuses after its request, until the exec
// closes the pipe, and returns the last (or why there was none).
func (s *starter) awaitExec() execStatus {
	defer s.close()
	st := execStatus{Error: "the child exited without a word", Code: selftest.ExitCannotExec}
	for {
		var m execStatus
		if err := s.status.Decode(&m); err != nil {
			return st // EOF: the exec closed the pipe, or the child is gone
		}
		st = m
	}
}

// hold sends the child its program to prepare (execRequest.Hold); start
// then has it executed.
func (s *starter) hold(r execRequest) error {
	r.Hold = true
	if err := s.send(r); err != nil {
		return fmt.Errorf("send the program: %w", err)
	}
	return nil
}

// start tells a held child to execute its program and returns once the
// program runs (its status pipe closed after the last status) or the
// child failed.
func (s *starter) start() execStatus {
	err := s.send(startLine{Start: true})
	s.req.Close()
	if err != nil {
		s.close()
		return execStatus{Error: "start the program: " + err.Error(), Code: selftest.ExitInitFailed}
	}
	return s.awaitExec()
}

// cancel tells the child that nothing is to be started; it exits 0.
func (s *starter) cancel() {
	s.req.Close()
	s.close()
	reapPid(s.pid)
}

// kill ends the child and collects it.
func (s *starter) kill() {
	_ = unix.Kill(s.pid, unix.SIGKILL)
	s.req.Close()
	s.close()
	reapPid(s.pid)
}

// execAgentMain is the child (--exec-agent): become the agent, report,
// wait for the program, confine, report, execute.
func execAgentMain() int {
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	reqFile, statusFile := os.NewFile(3, "request"), os.NewFile(4, "status")
	status := json.NewEncoder(statusFile)
	fail := func(code int, format string, args ...any) int {
		_ = status.Encode(execStatus{Error: fmt.Sprintf(format, args...), Code: code})
		return code
	}
	in := json.NewDecoder(reqFile)
	var who becomeRequest
	if err := in.Decode(&who); err != nil {
		return fail(selftest.ExitInitFailed, "read who to become: %v", err)
	}
	if err := protectWorkspace(who.Protect); err != nil {
		return fail(selftest.ExitInitFailed, "%v", err)
	}
	if err := becomeAgent(who.User, who.Terminal); err != nil {
		return fail(selftest.ExitInitFailed, "%v", err)
	}
	if err := loadSeccomp(who.Seccomp); err != nil {
		return fail(selftest.ExitInitFailed, "%v", err)
	}
	if err := status.Encode(execStatus{Ready: true}); err != nil {
		return selftest.ExitInitFailed
	}
	var req execRequest
	if err := in.Decode(&req); err != nil {
		return 0 // EOF: nothing to start (a probe-only run, or an abort)
	}
	if req.Probes != nil {
		return probeInPlace(req, status, func() { reqFile.Close(); statusFile.Close() })
	}
	return execProgram(req, in, status)
}

// probeInPlace runs the probes of req.Probes in this process, which has
// become the agent, and prints their results on stdout as JSON lines, as
// `agentbox-init --probe all --json` would after an exec: one Go process
// start fewer before the first probe. It stands where that program stood:
// the agent's ids, no capability, the agent's seccomp filter (every thread:
// the ids, the bounding set and the filter are set on all of them), the
// agent's directory and environment, stdin the pipe init closed, stdout the
// pipe init reads, no Landlock (the probes never had it). Two things an exec
// would reset are reset by hand: the uid switch left this process not
// dumpable (so its /proc/self files were root's and its children could not
// be traced by their own uid), which an exec of a program without set-id
// bits undoes; and the request and status pipes, close-on-exec, are closed
// before the first probe (which is how init sees that the probes began).
func probeInPlace(req execRequest, status *json.Encoder, closePipes func()) int {
	fail := func(code int, format string, args ...any) int {
		_ = status.Encode(execStatus{Error: fmt.Sprintf(format, args...), Code: code})
		closePipes()
		return code
	}
	if err := os.Chdir(dirOrRoot(req.Dir)); err != nil {
		return fail(selftest.ExitCannotExec, "change into the agent's directory: %v", err)
	}
	cfg := *req.Probes
	if err := cfg.Validate(); err != nil {
		return fail(selftest.ExitInitFailed, "probe config: %v", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
		return fail(selftest.ExitInitFailed, "make the probe process dumpable, as an exec would: %v", err)
	}
	// It was started before init had the configuration, with init's own
	// environment (the same, from the launcher's spec); the probes judge
	// the request's, and the process has it too, as an exec with it would
	// have given it (for a name set twice, the first value).
	if !slices.Equal(os.Environ(), req.Env) {
		setEnviron(req.Env)
	}
	if err := status.Encode(execStatus{}); err != nil {
		closePipes()
		return selftest.ExitInitFailed
	}
	closePipes()
	e := selftest.NewEnv(&cfg)
	e.Environ = req.Env
	return printResults(e, os.Stdout, os.Stderr, true)
}

// setEnviron makes env the process's environment.
func setEnviron(env []string) {
	os.Clearenv()
	set := map[string]bool{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && !set[k] {
			set[k] = true
			_ = os.Setenv(k, v)
		}
	}
}

// execProgram changes into the program's directory, finds the program,
// prepares its Landlock rulesets, and then (with req.Hold, once init's
// startLine comes; EOF instead means nothing is to be started) enforces
// them on this thread and executes the program. It returns only on
// failure; a failure of the preparation is reported only when the start
// comes, as it was when all of it happened then, so that the child stays
// parked for the host's verification either way.
func execProgram(req execRequest, in *json.Decoder, status *json.Encoder) int {
	path, ll, failed := prepareProgram(req)
	if req.Hold {
		var start startLine
		if err := in.Decode(&start); err != nil || !start.Start {
			if ll != nil {
				ll.Close()
			}
			return 0 // nothing to start (an abort)
		}
	}
	if failed != nil {
		_ = status.Encode(*failed)
		return failed.Code
	}
	if err := ll.Enforce(); err != nil {
		_ = status.Encode(execStatus{Error: "landlock: " + err.Error(), Code: selftest.ExitInitFailed})
		return selftest.ExitInitFailed
	}
	_ = status.Encode(execStatus{Landlock: ll.Status})
	err := syscall.Exec(path, req.Args, req.Env)
	_ = status.Encode(execStatus{Error: fmt.Sprintf("exec %s: %v", path, err), Code: selftest.ExitCannotExec})
	return selftest.ExitCannotExec
}

// prepareProgram is what execProgram does before the start: the
// directory, the program's path and the Landlock rulesets, or the status
// that says why the program cannot be started.
func prepareProgram(req execRequest) (string, *selftest.PreparedLandlock, *execStatus) {
	if len(req.Args) == 0 {
		return "", nil, &execStatus{Error: "no program to execute", Code: selftest.ExitCannotExec}
	}
	if err := os.Chdir(dirOrRoot(req.Dir)); err != nil {
		return "", nil, &execStatus{Error: "change into the agent's directory: " + err.Error(), Code: selftest.ExitCannotExec}
	}
	path, err := lookPath(req.Args[0], req.Env)
	if err != nil {
		return "", nil, &execStatus{Error: err.Error(), Code: selftest.ExitNotFound}
	}
	ll, err := selftest.PrepareLandlock(req.Landlock)
	if err != nil {
		ll.Close()
		return "", nil, &execStatus{Error: "landlock: " + err.Error(), Code: selftest.ExitInitFailed}
	}
	return path, ll, nil
}
