package engine

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Session runs one sandbox: create, start, wait. The caller tears it down
// with Teardown whatever happened.
type Session struct {
	Runtime Runtime
	ID      string
	Bundle  string
	// ConsoleSocket is where to receive the pty when Terminal is set.
	ConsoleSocket string
	Terminal      bool
	// In, Out and Err are the user's streams.
	In       *os.File
	Out, Err *os.File
	// ExtraFiles become fds 3, 4, … of the sandbox's first process.
	ExtraFiles []*os.File
	// Grace is how long a forwarded SIGTERM or SIGHUP may take before the
	// sandbox is killed; zero means 10 seconds.
	Grace time.Duration

	pid  int
	term *Terminal
}

// Pid is the host pid of the sandbox's first process, once created.
func (s *Session) Pid() int { return s.pid }

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
		o.Stdio = Stdio{In: s.In, Out: s.Out, Err: s.Err}
	}
	pid, err := s.Runtime.Create(ctx, s.ID, s.Bundle, o)
	if err != nil {
		return 0, err
	}
	s.pid = pid
	if s.Terminal {
		return pid, s.attach(ctx, ptys)
	}
	return pid, nil
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
		t, err := ProxyTerminal(s.In, s.Out, r.f)
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

// Start runs the sandbox's command.
func (s *Session) Start(ctx context.Context) error { return s.Runtime.Start(ctx, s.ID) }

// Wait waits for the sandbox's first process and returns its exit code.
// Signals arriving on sigs are forwarded to it; interactive ones (SIGINT,
// SIGQUIT) only when forwardInteractive, since a terminal delivers those to
// the sandbox's process group itself. After a forwarded SIGTERM or SIGHUP,
// the sandbox gets Grace to exit before it is killed.
func (s *Session) Wait(ctx context.Context, sigs <-chan os.Signal, forwardInteractive bool) (int, error) {
	if s.term != nil {
		defer s.term.Close()
	}
	done := make(chan waitResult, 1)
	go func() { code, err := Wait(s.pid); done <- waitResult{code, err} }()
	var kill <-chan time.Time
	for {
		select {
		case r := <-done:
			if s.term != nil {
				drain, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				s.term.Wait(drain) // let the pty flush the last output
				cancel()
			}
			return r.code, r.err
		case sig := <-sigs:
			if t := s.forward(sig, forwardInteractive); t != nil && kill == nil {
				kill = t
			}
		case <-kill:
			_ = unix.Kill(s.pid, unix.SIGKILL)
		case <-ctx.Done():
			_ = unix.Kill(s.pid, unix.SIGKILL)
			ctx = context.Background()
		}
	}
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
	_ = unix.Kill(s.pid, ss)
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
