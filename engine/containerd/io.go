package containerd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
)

// stdio connects a task's streams to the launcher's. The shim copies the
// sandbox's pipes (or its pty) to FIFOs in the run directory; cio copies
// the FIFOs to the launcher's own copies of the Session's pipe ends, or,
// with a terminal, to a pty of the launcher's whose master the Session
// receives on its console socket as it would from the runtime.
type stdio struct {
	opts []cio.Opt
	// mine are the files this engine holds for the copy (duplicates of
	// the Session's ends, or the launcher's pty), closed by finish.
	mine []*os.File
	// pty is the launcher's pty end the shim's pty is relayed to; nil
	// without a terminal.
	pty *os.File

	// stdinEnd is closed when the copy of the sandbox's stdin has reached
	// its end; nil without a stdin.
	stdinEnd chan struct{}

	mu   sync.Mutex
	cio  cio.IO
	stop chan struct{}
	once sync.Once
}

// endReader closes end once its reader has reached its end (or failed).
type endReader struct {
	r    io.Reader
	end  chan struct{}
	once sync.Once
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.end) })
	}
	return n, err
}

// copyWait bounds how long the end of a task waits for cio to pass the
// last of its output on.
const copyWait = 2 * time.Second

// resizeEvery is how often the launcher's pty size is checked and handed
// to the task: the Session sets it from the user's terminal, and nothing
// signals this process when it changes.
const resizeEvery = 200 * time.Millisecond

// oneOutput reports whether the Session gave the sandbox one pipe as its
// stdout and its stderr (the user's are one file: a terminal, `>log
// 2>&1`). The create then gives the sandbox its stdout as stderr too
// (fds-exec --stderr stdout), and the shim's stderr stays empty: two
// streams, copied apart by the shim and by cio, would lose the order of
// what it wrote.
func oneOutput(o engine.CreateOptions) bool {
	return o.ConsoleSocket == "" && o.Stdio.Out != nil && o.Stdio.Out == o.Stdio.Err
}

func newStdio(o engine.CreateOptions, fifoDir string) (*stdio, error) {
	s := &stdio{stop: make(chan struct{})}
	s.opts = append(s.opts, cio.WithFIFODir(fifoDir))
	if o.ConsoleSocket != "" {
		return s, s.terminal(o.ConsoleSocket)
	}
	var in io.Reader
	var out, errw io.Writer
	files := []*os.File{o.Stdio.In, o.Stdio.Out, o.Stdio.Err}
	if oneOutput(o) {
		files[2] = nil // the sandbox's stderr is its stdout (shimRuntime)
	}
	for i, f := range files {
		if f == nil {
			continue // a nil file stays a nil interface: no FIFO, /dev/null inside
		}
		d, err := dup(f)
		if err != nil {
			s.close()
			return nil, err
		}
		s.mine = append(s.mine, d)
		switch i {
		case 0:
			s.stdinEnd = make(chan struct{})
			in = &endReader{r: d, end: s.stdinEnd}
		case 1:
			out = d
		default:
			errw = d
		}
	}
	if out == nil && errw != nil {
		// A shim opens the stdout FIFO whenever it has a stderr one
		// (containerd 1.6 fails on an empty path): what the sandbox writes
		// there is discarded, as /dev/null would.
		out = io.Discard
	}
	if oneOutput(o) {
		// And the stderr FIFO whenever it has a stdout one; the sandbox
		// writes nothing there, its stderr being its stdout.
		errw = io.Discard
	}
	s.opts = append(s.opts, cio.WithStreams(in, out, errw))
	return s, nil
}

func dup(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox streams: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// terminal makes the launcher's pty, sends its master to the Session's
// console socket, and relays the other end to the task's terminal.
func (s *stdio) terminal(socket string) error {
	master, peer, err := openPty()
	if err != nil {
		return err
	}
	defer master.Close() // the Session has its own once sent
	s.pty, s.mine = peer, append(s.mine, peer)
	if err := sendMaster(socket, master); err != nil {
		s.close()
		return err
	}
	s.opts = append(s.opts, cio.WithStreams(peer, peer, nil), cio.WithTerminal)
	return nil
}

// sendMaster hands the pty master to the Session, as a runtime does with
// --console-socket.
func sendMaster(socket string, master *os.File) error {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("console socket: %w", err)
	}
	defer conn.Close()
	_, _, err = conn.WriteMsgUnix([]byte(master.Name()), unix.UnixRights(int(master.Fd())), nil)
	if err != nil {
		return fmt.Errorf("console socket: send the pty: %w", err)
	}
	return nil
}

// creator is the task's cio.Creator; it keeps the IO it makes.
func (s *stdio) creator() cio.Creator {
	base := cio.NewCreator(s.opts...)
	return func(id string) (cio.IO, error) {
		i, err := base(id)
		s.mu.Lock()
		s.cio = i
		s.mu.Unlock()
		return i, err
	}
}

// attach passes the end of the sandbox's stdin on to the task, and with a
// terminal follows the launcher's pty size.
func (s *stdio) attach(task containerd.Task) {
	if s.stdinEnd != nil {
		go s.closeStdin(task)
	}
	if s.pty != nil {
		go s.followSize(task)
	}
}

// closeStdin tells the shim that stdin has ended once its copy has: the
// shim holds the stdin FIFO open itself (so that a client may attach
// again), and only CloseIO lets the sandbox read the end of its input.
func (s *stdio) closeStdin(task containerd.Task) {
	select {
	case <-s.stdinEnd:
	case <-s.stop:
		return
	}
	ctx := namespaces.WithNamespace(context.Background(), Namespace)
	_ = task.CloseIO(ctx, containerd.WithStdinCloser)
}

func (s *stdio) followSize(task containerd.Task) {
	ctx := namespaces.WithNamespace(context.Background(), Namespace)
	var last unix.Winsize
	tick := time.NewTicker(resizeEvery)
	defer tick.Stop()
	for {
		s.resize(ctx, task, &last)
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

// resize hands the launcher's pty size to the task when it differs from
// *last, and records it there once the shim took it.
func (s *stdio) resize(ctx context.Context, task containerd.Task, last *unix.Winsize) {
	if s.pty == nil {
		return
	}
	if ws, err := unix.IoctlGetWinsize(int(s.pty.Fd()), unix.TIOCGWINSZ); err == nil && *ws != *last && ws.Col > 0 && ws.Row > 0 {
		if task.Resize(ctx, uint32(ws.Col), uint32(ws.Row)) == nil {
			*last = *ws
		}
	}
}

// finish waits, a bounded time, until cio has passed the task's output
// on, then closes this engine's ends (so that the Session's copies reach
// their end) and the FIFOs.
func (s *stdio) finish() {
	s.mu.Lock()
	i := s.cio
	s.mu.Unlock()
	if i != nil {
		done := make(chan struct{})
		go func() { i.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(copyWait):
		}
	}
	s.close()
}

// close ends everything without waiting; it may be called more than once.
func (s *stdio) close() {
	s.once.Do(func() {
		close(s.stop)
		var errs []error
		for _, f := range s.mine {
			errs = append(errs, f.Close())
		}
		s.mu.Lock()
		if s.cio != nil {
			s.cio.Cancel()
			errs = append(errs, s.cio.Close())
		}
		s.mu.Unlock()
		_ = errors.Join(errs...)
	})
}
