package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/termfilter"
)

// Session runs one sandbox on an Engine: create, start, wait. The caller
// tears it down with the Engine's Teardown whatever happened.
type Session struct {
	Engine Engine
	ID     string
	Bundle string
	// ConsoleSocket is where to receive the pty when Terminal is set.
	ConsoleSocket string
	Terminal      bool
	// In, Out and Err are the user's streams; a nil one is /dev/null to
	// the sandbox. The sandbox gets none of them: with a terminal it gets a
	// pty, without one pipes that the session copies (see streams).
	In       *os.File
	Out, Err *os.File
	// RawTerminal passes what the sandbox writes to a terminal unfiltered
	// (see termfilter; agentbox run --raw-terminal).
	RawTerminal bool
	// ExtraFiles become fds 3, 4, … of the sandbox's first process.
	ExtraFiles []*os.File
	// Grace is how long a forwarded SIGTERM or SIGHUP may take before the
	// sandbox is killed; zero means 10 seconds.
	Grace time.Duration
	// Held says that the sandbox's first process holds the command back
	// until it is told to go (agentbox-init does, on its channel): then
	// an engine that is a Runner creates and starts it in one call, and
	// Start has nothing left to do.
	Held bool
	// ExitReport, when set, returns the agent's exit code as the sandbox's
	// first process reported it before exiting (agentbox-init does, on its
	// channel), or an error when it reported none. With a foreground
	// runtime (see Foreground), whose exit status stands for that
	// process's, the two must agree.
	ExitReport func(ctx context.Context) (int, error)

	pid     int
	started bool
	fg      *Foreground // the runtime in the foreground, if any
	term    *Terminal
	streams *streams
	// early says that WaitExit returned on the first process's report,
	// before its foreground runtime had exited: Settle then checks the
	// report against the runtime's status, and writes out the output.
	early    bool
	reported int
	settled  bool
	result   waitResult // what Settle returns, once settled
}

// drainWait bounds how long Wait waits, after the sandbox's first process
// exited, for the rest of its output (the kernel kills the sandbox's other
// processes with it, which closes their ends).
const drainWait = 500 * time.Millisecond

// Pid is the host pid of the sandbox's first process, once created.
func (s *Session) Pid() int { return s.pid }

// Runtime names the runtime process that runs the sandbox in the
// foreground, by pid and start time (see Foreground); 0 for none.
func (s *Session) Runtime() (pid int, start uint64) {
	if s.fg == nil {
		return 0, 0
	}
	return s.fg.RuntimePid, s.fg.RuntimeStart
}

// Create sets the sandbox up, ready to start. With a terminal, the user's
// terminal is put in raw mode and proxied from here on.
func (s *Session) Create(ctx context.Context) (int, error) {
	o := CreateOptions{ExtraFiles: s.ExtraFiles}
	ptys := make(chan ptyResult, 1)
	if s.Terminal {
		sock, err := ListenConsole(s.ConsoleSocket)
		if err != nil {
			return 0, err
		}
		defer sock.Close()
		o.ConsoleSocket = sock.Path
		go func() { f, err := sock.Receive(ctx); ptys <- ptyResult{f, err} }()
	} else {
		st, err := newStreams(s.In, s.Out, s.Err, s.RawTerminal)
		if err != nil {
			return 0, fmt.Errorf("sandbox streams: %w", err)
		}
		s.streams, o.Stdio = st, st.sandbox
	}
	pid, err := s.create(ctx, o)
	if s.streams != nil {
		s.streams.start() // the runtime passed its ends on, or failed
	}
	if err != nil {
		return 0, err
	}
	s.pid = pid
	if s.Terminal {
		return pid, s.attach(ctx, ptys)
	}
	return pid, nil
}

// create is the engine's Create, or its Run when the command is held: in
// the foreground when the engine can and the sandbox has no terminal.
func (s *Session) create(ctx context.Context, o CreateOptions) (int, error) {
	if r, ok := s.Engine.(ForegroundRunner); ok && s.Held && !s.Terminal && r.Foreground(o) {
		fg, err := r.RunForeground(ctx, s.ID, s.Bundle, o)
		if err != nil {
			return 0, err
		}
		s.fg, s.started = fg, true
		return fg.Pid, nil
	}
	if r, ok := s.Engine.(Runner); ok && s.Held {
		pid, err := r.Run(ctx, s.ID, s.Bundle, o)
		s.started = err == nil
		return pid, err
	}
	return s.Engine.Create(ctx, s.ID, s.Bundle, o)
}

type ptyResult struct {
	f   *os.File
	err error
}

func (s *Session) attach(ctx context.Context, ptys <-chan ptyResult) error {
	select {
	case r := <-ptys:
		if r.err != nil {
			return r.err
		}
		t, err := ProxyTerminal(s.In, s.Out, r.f, s.RawTerminal)
		if err != nil {
			r.f.Close()
			return err
		}
		s.term = t
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("runtime created a terminal sandbox but sent no pty")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Start runs the sandbox's command; for a held sandbox that Create
// started already (see Held), there is nothing left to do.
func (s *Session) Start(ctx context.Context) error {
	if s.started {
		return nil
	}
	return s.Engine.Start(ctx, s.ID)
}

// Wait waits for the sandbox's first process and returns its exit code.
// Signals arriving on sigs are forwarded to it; interactive ones (SIGINT,
// SIGQUIT) only when forwardInteractive, since a terminal delivers those to
// the sandbox's process group itself. After a forwarded SIGTERM or SIGHUP,
// the sandbox gets Grace to exit before it is killed.
//
// A foreground runtime's sandbox is in the runtime's own process group,
// which no terminal signals: it gets the interactive ones from here too.
//
// When it returns, the sandbox's output has been written out (see Close).
// It is WaitExit and then Settle.
func (s *Session) Wait(ctx context.Context, sigs <-chan os.Signal, forwardInteractive bool) (int, error) {
	defer s.Close()
	_, _ = s.WaitExit(ctx, sigs, forwardInteractive) // what Settle returns, and waits for if it is early
	return s.Settle()
}

// WaitExit is Wait up to the first process's exit, as Wait but for a
// sandbox whose foreground runtime has not yet exited, which the first
// process's exit report (ExitReport) then stands for until Settle: once
// that process reported its agent's exit code and exited, which the
// kernel completes only after every other process of its pid namespace
// has ended, WaitExit returns that code while the runtime still collects
// the process and deletes the container. The code is not final before
// Settle, which waits for the runtime, checks the report against its
// status and log as Wait does, and writes out the sandbox's output; in
// between, the caller may do what does not depend on the runtime's
// state, the bundle or the output (Pending, RuntimeDone). Otherwise it
// returns what Wait returns, and the session is settled and closed.
func (s *Session) WaitExit(ctx context.Context, sigs <-chan os.Signal, forwardInteractive bool) (int, error) {
	if s.fg != nil {
		forwardInteractive = true
	}
	done := make(chan waitResult, 1)
	go func() { code, err := s.waitFirst(); done <- waitResult{code, err} }()
	var kill <-chan time.Time
	for {
		select {
		case r := <-done:
			if s.early {
				return r.code, r.err
			}
			s.drain()
			s.Close()
			s.settled, s.result = true, r
			return r.code, r.err
		case sig := <-sigs:
			if t := s.forward(sig, forwardInteractive); t != nil && kill == nil {
				kill = t
			}
		case <-kill:
			_ = s.signal(unix.SIGKILL)
		case <-ctx.Done():
			_ = s.signal(unix.SIGKILL)
			ctx = context.Background()
		}
	}
}

// Pending reports whether WaitExit returned before the foreground runtime
// had exited, and Settle has not run yet.
func (s *Session) Pending() bool { return s.early && !s.settled }

// RuntimeDone is closed once the foreground runtime has exited and been
// collected; nil when the sandbox has none.
func (s *Session) RuntimeDone() <-chan struct{} {
	if s.fg == nil {
		return nil
	}
	return s.fg.Done()
}

// Settle returns the sandbox's exit code and error as Wait does. After a
// WaitExit that returned early (Pending), it first waits for the
// foreground runtime, checks the first process's report against the
// runtime's status and log, waits, a bounded time, for the rest of the
// sandbox's output, and closes the session (Close); otherwise it returns
// what WaitExit returned.
func (s *Session) Settle() (int, error) {
	if !s.settled {
		if s.early {
			code, err := s.fg.Wait()
			s.result.code, s.result.err = checkReport(code, err, s.reported)
		}
		s.drain()
		s.Close()
		s.settled = true
	}
	return s.result.code, s.result.err
}

// waitFirst waits for the sandbox's first process: as its subreaper, or
// through the engine when that process is not the launcher's child, or
// through the runtime that runs it in the foreground.
func (s *Session) waitFirst() (int, error) {
	if s.fg != nil {
		return s.waitForeground()
	}
	if w, ok := s.Engine.(Waiter); ok {
		return w.Wait(s.ID)
	}
	return Wait(s.pid)
}

// reportWait bounds how long, once the foreground runtime has exited,
// waitForeground waits for the first process's report (sent before that
// process exited: waiting in the channel, if it was sent).
const reportWait = time.Second

// waitForeground waits for the foreground runtime, which collects the
// sandbox's first process, deletes the container and exits with that
// process's status. The code is the one the first process reported
// (ExitReport), checked against the runtime's status (checkReport);
// without a report (a first process that was killed, or that ran no
// agent) it is the runtime's status. When the report comes, and then the
// first process exits, before the runtime does, it returns the report and
// leaves the check to Settle (early).
func (s *Session) waitForeground() (int, error) {
	if s.ExitReport == nil {
		return s.fg.Wait()
	}
	reports := make(chan waitResult, 1)
	go func() {
		// Until the report, init's exit closing the channel, or the
		// launcher's own Close of it in teardown.
		code, err := s.ExitReport(context.Background())
		reports <- waitResult{code, err}
	}()
	var r waitResult
	select {
	case r = <-reports:
		if r.err == nil && s.fg.awaitInit() {
			s.early, s.reported = true, r.code
			return r.code, nil
		}
	case <-s.fg.Done():
		select {
		case r = <-reports:
		case <-time.After(reportWait):
			r.err = errors.New("no report")
		}
	}
	code, err := s.fg.Wait()
	if err != nil || r.err != nil {
		return code, err
	}
	return checkReport(code, nil, r.code)
}

// checkReport is the exit code of a sandbox whose first process reported
// reported and whose foreground runtime exited with code, or failed with
// err: the report when the two agree, the runtime's status and an error
// when they do not.
func checkReport(code int, err error, reported int) (int, error) {
	if err != nil {
		return code, err
	}
	if reported != code {
		return code, fmt.Errorf("the sandbox's first process reported exit status %d, but its runtime exited with %d", reported, code)
	}
	return reported, nil
}

// signal sends sig to the sandbox's first process: through the foreground
// runtime's pidfd of it, or by pid (the launcher's child, or the engine's).
func (s *Session) signal(sig syscall.Signal) error {
	if s.fg != nil {
		return s.fg.Signal(sig)
	}
	return unix.Kill(s.pid, sig)
}

// drain waits, a bounded time, for the last of the sandbox's output.
func (s *Session) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), drainWait)
	defer cancel()
	switch {
	case s.term != nil:
		s.term.Wait(ctx)
	case s.streams != nil:
		s.streams.drain(ctx)
	}
}

// Close ends the copying of the sandbox's streams, after writing out all
// that was read of its output, undoes the terminal modes it left set and
// restores the user's terminal settings. Whatever the launcher prints after
// Close comes after the sandbox's output. It may be called more than once,
// and after a Create that failed.
func (s *Session) Close() {
	if s.term != nil {
		s.term.Close()
	}
	if s.streams != nil {
		s.streams.close()
	}
	if s.fg != nil {
		s.fg.Close()
	}
}

// Dropped reports what the terminal filter kept from the user's terminal.
func (s *Session) Dropped() termfilter.Stats {
	var d termfilter.Stats
	if s.term != nil {
		d = d.Add(s.term.Dropped())
	}
	if s.streams != nil {
		d = d.Add(s.streams.dropped())
	}
	return d
}

type waitResult struct {
	code int
	err  error
}

// forward sends sig to the sandbox and, for a termination request, returns
// the timer after which it is killed.
func (s *Session) forward(sig os.Signal, interactive bool) <-chan time.Time {
	ss, ok := sig.(syscall.Signal)
	if !ok {
		return nil
	}
	if (ss == syscall.SIGINT || ss == syscall.SIGQUIT) && !interactive {
		return nil
	}
	_ = s.signal(ss)
	if ss == syscall.SIGTERM || ss == syscall.SIGHUP {
		g := s.Grace
		if g == 0 {
			g = 10 * time.Second
		}
		return time.After(g)
	}
	return nil
}

// ForegroundOfTerminal reports whether this process has a controlling
// terminal whose foreground process group is its own: then the terminal
// delivers Ctrl-C to the sandbox (which shares the group) by itself.
func ForegroundOfTerminal() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer tty.Close()
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
