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

// A starter is a child of init (this binary, --exec-agent) that becomes
// the agent, runs the probes there, and then waits, parked, to execute the
// agent itself: one process from init's fork to the agent's exec. It is the
// only way init starts anything, so nothing runs under init's ids or with
// init's capabilities, and the probes run in the very process, with the
// very credentials, namespaces and filter, that the agent will have (only
// the Landlock domain comes at the exec, see startAgent).
//
// Init writes two JSON lines on the child's fd 3: a becomeRequest, which
// the child answers on fd 4 with an execStatus ("ready", or an error), and
// then an execRequest, or EOF when nothing is to be started. Init writes
// both at once (the child starts before init has its configuration); the
// child decodes the second while it becomes the agent, and acts on it only
// once it is. With probes in the request, the child runs them first and
// writes their results as JSON lines on fd 5, which it closes after the
// last, followed by a "probed" status on fd 4. The child confines itself with the request's Landlock
// plan, reports that, and executes the program; the exec closes fd 4
// (close-on-exec), and a failed exec is one more execStatus. From "ready"
// on, the child runs with the agent's credentials, so the launcher
// verifies exactly those from the host before it lets the agent start, and
// right before the exec the child checks that the probes left it nothing
// the agent would inherit (slate).

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
// the PATH of Env when it has no slash. With Probes, the child first runs
// the probes of that configuration itself (see probeFirst). With Hold, the
// child prepares everything (the directory, the path, the Landlock
// rulesets) and then waits for a startLine before it confines itself and
// executes the program.
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
	Ready bool `json:"ready,omitempty"`
	// Probed says that the probes ran and every result was written.
	Probed   bool                    `json:"probed,omitempty"`
	Landlock selftest.LandlockStatus `json:"landlock"`
	Error    string                  `json:"error,omitempty"`
	Code     int                     `json:"code,omitempty"`
}

// starter is init's handle on one such child.
type starter struct {
	pid     int
	req     *os.File
	status  *json.Decoder
	results *os.File // the read end of the child's fd 5
	close   func()
	gone    bool // collected: its pid may be another process's now
}

// spawn starts a child with stdio as its fds 0, 1 and 2 and init's own
// environment, in a process group of its own, in / (init's uid need not
// reach the workspace; the child changes into the agent's directory once
// it is the agent), and returns at once: the child waits to be told who
// to become (become), so its Go start-up overlaps what init does
// meanwhile. With tty, fd 0 is the sandbox's terminal: the child becomes
// its foreground group (and, once told, its owner). With protect, the
// child starts in a mount namespace of its own, where it makes those binds
// before it becomes the agent.
func spawn(stdio [3]uintptr, tty bool, protect *selftest.Protect) (*starter, error) {
	var pipes [3][2]*os.File // request, status, results: child's end, init's end
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closePipes(pipes[:i])
			return nil, err
		}
		if i == 0 {
			pipes[i] = [2]*os.File{r, w}
		} else {
			pipes[i] = [2]*os.File{w, r}
		}
	}
	sys := &syscall.SysProcAttr{Setpgid: true, Foreground: tty}
	if protect != nil && len(protect.Binds) > 0 {
		sys.Unshareflags = syscall.CLONE_NEWNS // and "/" made rprivate by Go
	}
	files := []uintptr{stdio[0], stdio[1], stdio[2], pipes[0][0].Fd(), pipes[1][0].Fd(), pipes[2][0].Fd()}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"agentbox-init", "--exec-agent"}, &syscall.ProcAttr{
		Dir: "/", Env: os.Environ(), Files: files, Sys: sys,
	})
	for _, p := range pipes {
		p[0].Close()
	}
	if err != nil {
		for _, p := range pipes {
			p[1].Close()
		}
		return nil, fmt.Errorf("start a child: %w", err)
	}
	tree.add(pid)
	st := pipes[1][1]
	res := pipes[2][1]
	return &starter{pid: pid, req: pipes[0][1], status: json.NewDecoder(st), results: res, close: func() { st.Close(); res.Close() }}, nil
}

// closePipes closes both ends of each pipe.
func closePipes(pipes [][2]*os.File) {
	for _, p := range pipes {
		p[0].Close()
		p[1].Close()
	}
}

// become tells the child who to become and what to do then (its
// execRequest, held for the go), runs meanwhile (when not nil) while the
// child becomes the agent, and returns once it is the agent. A child that
// failed is collected, and its own word on why comes before that of
// init's write to it; a failure of meanwhile ends the child.
func (s *starter) become(who becomeRequest, then execRequest, meanwhile func() error) error {
	err := s.send(who)
	if err == nil {
		err = s.send(then)
	}
	if err == nil && meanwhile != nil {
		if merr := meanwhile(); merr != nil {
			s.kill()
			return merr
		}
	}
	if rerr := s.awaitReady(); rerr != nil {
		return rerr
	}
	if err != nil {
		s.kill()
		return fmt.Errorf("tell the child its work: %w", err)
	}
	return nil
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

// probed hands each result line the child writes on its fd 5 to emit
// (seen records them), calling flush whenever no further line is waiting,
// and returns once the child said that the probes ran: after the last
// result, the child's "probed" status. A child that failed instead is
// collected, and its word (or its end) is the error.
func (s *starter) probed(seen map[string]bool, emit func(selftest.Result) error, flush func() error) error {
	err := selftest.ReadResultsBatched(s.results, seen, emit, flush)
	s.results.Close()
	if err != nil {
		s.kill()
		return err
	}
	var st execStatus
	if err := s.status.Decode(&st); err != nil || !st.Probed {
		s.kill()
		if st.Error == "" {
			st.Error = fmt.Sprintf("the child ended without a word after %d results (%v)", len(seen), err)
		}
		return errors.New(st.Error)
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
	s.reap()
}

// kill ends the child and collects it, unless there is no child (nil) or
// it was collected already.
func (s *starter) kill() {
	if s == nil || s.gone {
		return
	}
	_ = unix.Kill(s.pid, unix.SIGKILL)
	s.req.Close()
	s.close()
	s.reap()
}

// reap collects the exited child and returns how it ended.
func (s *starter) reap() unix.WaitStatus {
	s.gone = true
	return reapPid(s.pid)
}

// execAgentMain is the child (--exec-agent): become the agent, report,
// run the probes when asked, wait for the program, confine, report,
// execute.
func execAgentMain() int {
	for fd := 3; fd <= 5; fd++ {
		unix.CloseOnExec(fd)
	}
	reqFile, statusFile, resultsFile := os.NewFile(3, "request"), os.NewFile(4, "status"), os.NewFile(5, "results")
	status := json.NewEncoder(statusFile)
	fail := func(code int, format string, args ...any) int {
		_ = status.Encode(execStatus{Error: fmt.Sprintf(format, args...), Code: code})
		return code
	}
	// encoding/json learns a type's fields on its first use: learnt while
	// the child still waits for init, they are off the way to the probes.
	go warmJSON()
	in := json.NewDecoder(reqFile)
	var who becomeRequest
	if err := in.Decode(&who); err != nil {
		return fail(selftest.ExitInitFailed, "read who to become: %v", err)
	}
	// Init wrote the execRequest with who: it is decoded (a 4 KB
	// configuration, up to 1.8 ms) while the child becomes the agent, and
	// nothing of it is used before the child is the agent and said so.
	reqc := make(chan decodedRequest, 1)
	go func() {
		var r decodedRequest
		r.err = in.Decode(&r.req)
		reqc <- r
	}()
	if err := protectWorkspace(who.Protect); err != nil {
		return fail(selftest.ExitInitFailed, "%v", err)
	}
	if err := becomeAgent(who.User, who.Terminal); err != nil {
		return fail(selftest.ExitInitFailed, "%v", err)
	}
	if err := loadSeccomp(who.Seccomp); err != nil {
		return fail(selftest.ExitInitFailed, "%v", err)
	}
	found, err := takeSlate(who.User)
	if err != nil {
		return fail(selftest.ExitInitFailed, "%v", err)
	}
	if err := status.Encode(execStatus{Ready: true}); err != nil {
		return selftest.ExitInitFailed
	}
	r := <-reqc
	if r.err != nil {
		return 0 // EOF: nothing to start (an abort)
	}
	req := r.req
	if req.Probes != nil {
		if code := probeFirst(req, resultsFile, status); code != 0 {
			return code
		}
	}
	resultsFile.Close()
	return execProgram(req, in, status, found)
}

// decodedRequest is the child's execRequest as decoded, or why not.
type decodedRequest struct {
	req execRequest
	err error
}

// warmJSON has encoding/json learn the fields of every type init and its
// child decode and encode (an encoder is built for each type an empty
// value's type contains, and the decoder shares what it learns of each
// struct): about 0.5 ms off the first decode of a configuration.
func warmJSON() {
	_, _ = json.Marshal(&selftest.Message{})
	_, _ = json.Marshal(&becomeRequest{})
	_, _ = json.Marshal(&execRequest{})
	_, _ = json.Marshal(&execStatus{})
}

// probeFirst runs the probes of req.Probes in this process, which has
// become the agent and will execute it, and writes their results on
// results as JSON lines, as `agentbox-init --probe all --json` would after
// an exec; then it closes results and reports "probed". It stands where
// the agent will stand: the agent's ids, no capability, the agent's seccomp
// filter (every thread: the ids, the bounding set and the filter are set on
// all of them), its mount namespace, the agent's directory and
// environment, the sandbox's stdio, no Landlock (the probes never had it).
// The uid switch left this process not dumpable (its /proc/self files were
// root's, and its children could not be traced by their own uid), which an
// exec of a program without set-id bits undoes: so does probeFirst, as the
// agent's exec will again. It returns non-zero only when the probes could
// not run, after reporting why.
func probeFirst(req execRequest, results *os.File, status *json.Encoder) int {
	fail := func(code int, format string, args ...any) int {
		_ = status.Encode(execStatus{Error: fmt.Sprintf(format, args...), Code: code})
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
		return fail(selftest.ExitInitFailed, "make the agent's process dumpable, as an exec would: %v", err)
	}
	// It was started before init had the configuration, with init's own
	// environment (the same, from the launcher's spec); the probes judge
	// the request's, and the process has it too, as an exec with it would
	// have given it (for a name set twice, the first value).
	if !slices.Equal(os.Environ(), req.Env) {
		setEnviron(req.Env)
	}
	e := selftest.NewEnv(&cfg)
	e.Environ = req.Env
	printResults(e, results, os.Stderr, true) // 1 says a probe failed: the results say which
	if err := results.Close(); err != nil {
		return fail(selftest.ExitInitFailed, "close the results: %v", err)
	}
	if err := status.Encode(execStatus{Probed: true}); err != nil {
		return selftest.ExitInitFailed
	}
	return 0
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
// startLine comes; EOF instead means nothing is to be started) checks that
// the process is as clean as found (slate), enforces the rulesets on this
// thread and executes the program. It returns only on failure; a failure
// of the preparation is reported only when the start comes, as it was
// when all of it happened then, so that the child stays parked for the
// host's verification either way.
func execProgram(req execRequest, in *json.Decoder, status *json.Encoder, found *slate) int {
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
	if err := found.check(); err != nil {
		ll.Close()
		_ = status.Encode(execStatus{Error: "before the agent's exec: " + err.Error(), Code: selftest.ExitInitFailed})
		return selftest.ExitInitFailed
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
