package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/agentbox/agentbox/termfilter"
)

// streams stand between the user's files and a sandbox without a terminal.
// The sandbox never gets the user's file descriptions: an ftruncate, lseek
// or fcntl(F_SETFL) on a shared description would reach the user's file
// (`agentbox run … >> build.log`), and a terminal given as stdin is the
// user's terminal device. It gets three pipes instead, which the launcher
// copies: the user's stdin into one (closed at its end), the other two out
// to the user's stdout and stderr, through a termfilter.Writer where that
// is a terminal. When stdout and stderr are one file, the sandbox gets one
// pipe as both, copied through one Writer.
type streams struct {
	sandbox Stdio      // the sandbox's ends, until the runtime has them
	inW     *os.File   // the launcher's end of stdin
	outR    []*os.File // the launcher's ends of stdout and stderr
	dsts    []io.Writer
	filters []*termfilter.Writer
	terms   []*os.File // the terminals the filters write to
	in      *os.File
	copies  sync.WaitGroup
	pipeSig chan os.Signal
	once    sync.Once
}

// newStreams makes the pipes for in, out and errf; a nil file stays nil
// (the sandbox then gets /dev/null). A terminal given as in is read only
// while the launcher is in the terminal's foreground process group (else
// reading it would stop the launcher with SIGTTIN); otherwise the sandbox's
// stdin is empty.
func newStreams(in, out, errf *os.File, raw bool) (*streams, error) {
	s := &streams{}
	if in != nil && (!term.IsTerminal(int(in.Fd())) || foregroundOf(in)) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		s.sandbox.In, s.inW, s.in = r, w, in
	}
	if out != nil && errf != nil && sameFile(out, errf) {
		// One file given as both (a terminal, `>log 2>&1`): the sandbox
		// gets one pipe as both too, so that what it writes to each keeps
		// its order, as it would have written straight to the file.
		r, w, err := os.Pipe()
		if err != nil {
			s.closeAll()
			return nil, err
		}
		s.sandbox.Out, s.sandbox.Err = w, w
		s.outR, s.dsts = []*os.File{r}, []io.Writer{s.destination(out, raw)}
		return s, nil
	}
	for i, dst := range []*os.File{out, errf} {
		if dst == nil {
			continue
		}
		r, w, err := os.Pipe()
		if err != nil {
			s.closeAll()
			return nil, err
		}
		if i == 0 {
			s.sandbox.Out = w
		} else {
			s.sandbox.Err = w
		}
		s.outR = append(s.outR, r)
		s.dsts = append(s.dsts, s.destination(dst, raw))
	}
	return s, nil
}

// destination is where the copy of one output stream goes: dst itself, or
// the filter of the terminal dst is.
func (s *streams) destination(dst *os.File, raw bool) io.Writer {
	if !term.IsTerminal(int(dst.Fd())) {
		return dst
	}
	for i, t := range s.terms {
		if sameFile(t, dst) {
			return s.filters[i]
		}
	}
	// The sandbox does not read this terminal: queries are dropped too.
	f := termfilter.NewOneWay(dst)
	if raw {
		f = termfilter.NewRaw(dst)
	}
	s.terms, s.filters = append(s.terms, dst), append(s.filters, f)
	return f
}

// start closes the sandbox's ends (the runtime has passed them on) and
// starts copying.
func (s *streams) start() {
	s.closeSandboxEnds()
	// A user's stdout that is a closed pipe must end the copy with EPIPE,
	// not kill the launcher (Go's default for fds 1 and 2) before teardown.
	s.pipeSig = make(chan os.Signal, 1)
	signal.Notify(s.pipeSig, syscall.SIGPIPE)
	if s.inW != nil {
		go func() {
			_, _ = io.Copy(s.inW, s.in)
			s.inW.Close()
		}()
	}
	for i, r := range s.outR {
		s.copies.Go(func() {
			if _, err := io.Copy(s.dsts[i], r); err != nil {
				r.Close() // the user's side is gone: the sandbox's writes fail as they would have
			}
		})
	}
}

// drain waits until every process in the sandbox has closed its output
// (each copy has reached the end), or ctx ends.
func (s *streams) drain(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.copies.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// closeWait bounds how long close waits for a copy still writing (to a
// reader that stopped reading, or a terminal stopped with Ctrl-S).
const closeWait = 2 * time.Second

// close ends the copies (what was read is written first), undoes the
// terminal modes the sandbox left set on a terminal it wrote to, and stops
// feeding stdin. It may be called more than once.
func (s *streams) close() {
	s.once.Do(func() {
		s.closeAll()
		ctx, cancel := context.WithTimeout(context.Background(), closeWait)
		s.drain(ctx)
		cancel()
		if s.pipeSig != nil {
			signal.Stop(s.pipeSig)
		}
		for i, f := range s.filters {
			if r := f.Restore(); len(r) > 0 {
				_, _ = s.terms[i].Write(r)
			}
		}
	})
}

// dropped sums what the filters kept from the user's terminals.
func (s *streams) dropped() termfilter.Stats {
	var total termfilter.Stats
	for _, f := range s.filters {
		total = total.Add(f.Stats())
	}
	return total
}

func (s *streams) closeSandboxEnds() {
	for i, f := range []*os.File{s.sandbox.In, s.sandbox.Out, s.sandbox.Err} {
		if f != nil && (i < 2 || f != s.sandbox.Out) {
			f.Close()
		}
	}
}

func (s *streams) closeAll() {
	s.closeSandboxEnds()
	if s.inW != nil {
		s.inW.Close() // a copy still writing gets an error and ends
	}
	for _, r := range s.outR {
		r.Close()
	}
}

// sameFile reports whether a and b are the same open file (one terminal
// given as both stdout and stderr).
func sameFile(a, b *os.File) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(int(a.Fd()), &sa) != nil || unix.Fstat(int(b.Fd()), &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino && sa.Rdev == sb.Rdev
}

// foregroundOf reports whether reading terminal f cannot stop this process:
// it is in f's foreground process group, or f is not its controlling
// terminal (which job control leaves alone).
func foregroundOf(f *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	if errors.Is(err, unix.ENOTTY) {
		return true
	}
	return err == nil && pgrp == unix.Getpgrp()
}
