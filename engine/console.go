package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/agentbox/agentbox/termfilter"
)

// ConsoleSocket receives the pty master that the runtime creates for a
// sandbox with a terminal (runc --console-socket).
type ConsoleSocket struct {
	l    *net.UnixListener
	Path string
}

// ListenConsole listens on a new unix socket at path.
func ListenConsole(path string) (*ConsoleSocket, error) {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("console socket: %w", err)
	}
	return &ConsoleSocket{l: l, Path: path}, nil
}

// Close stops listening and removes the socket file.
func (c *ConsoleSocket) Close() error { return c.l.Close() }

// Receive accepts the runtime's connection and returns the pty master it
// sends. It gives up when ctx ends.
func (c *ConsoleSocket) Receive(ctx context.Context) (*os.File, error) {
	stop := context.AfterFunc(ctx, func() { c.l.Close() })
	defer stop()
	conn, err := c.l.AcceptUnix()
	if err != nil {
		return nil, fmt.Errorf("console socket: accept: %w", err)
	}
	defer conn.Close()
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("console socket: read: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("console socket: no control message with the pty")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, errors.New("console socket: expected exactly one fd")
	}
	// A non-blocking master is read through Go's poller, so that closing it
	// ends a copy even while a process in the sandbox holds the pty open.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("console socket: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "pty-master"), nil
}

// Terminal proxies the user's terminal to a sandbox's pty: in raw mode,
// following window size changes, with what the sandbox writes passed
// through a termfilter.Writer (unless raw). Close restores the terminal.
type Terminal struct {
	in, out *os.File
	master  *os.File
	saved   *term.State
	filter  *termfilter.Writer
	winch   chan os.Signal
	done    chan struct{}
	closed  bool
}

// ProxyTerminal starts copying between in/out and master. With raw, the
// sandbox's output reaches out unfiltered (agentbox run --raw-terminal).
func ProxyTerminal(in, out, master *os.File, raw bool) (*Terminal, error) {
	t := &Terminal{in: in, out: out, master: master, filter: newFilter(out, raw), winch: make(chan os.Signal, 1), done: make(chan struct{})}
	typed := pendingInput(in)
	saved, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return nil, fmt.Errorf("terminal: raw mode: %w", err)
	}
	t.saved = saved
	t.resize()
	if len(typed) > 0 {
		_, _ = master.Write(typed)
	}
	signal.Notify(t.winch, syscall.SIGWINCH)
	go t.followSize()
	go func() { _, _ = io.Copy(master, in) }()
	go func() { _, _ = io.Copy(t.filter, master); close(t.done) }()
	return t, nil
}

// pendingInput takes, before the terminal is put in raw mode, what the
// user typed ahead that the line discipline, still canonical, has already
// cut into lines: each complete line as typed, and each end-of-file mark
// (the EOF character, ^D, typed at the start of a line, or written by
// script(1) at the end of its stdin) as that character again. Left for the
// raw copy, a mark would be read as a NUL byte: a keystroke (^@) the user
// never typed, which the agent's pty echoes before the agent's first
// output. A partial line stays in the terminal for the copy. Only a
// terminal whose input this process may read (foregroundOf) is looked at,
// through a description of its own that does not block (reopenNonblock):
// poll says a whole line or a mark is there, but another reader of the
// terminal may take it first, and a blocking read would then wait for the
// user's next line.
func pendingInput(in *os.File) []byte {
	tio, err := unix.IoctlGetTermios(int(in.Fd()), ioctlGetTermios)
	if err != nil || tio.Lflag&unix.ICANON == 0 || !foregroundOf(in) {
		return nil
	}
	f, err := reopenNonblock(in)
	if err != nil {
		return nil
	}
	defer f.Close()
	fd := int(f.Fd())
	var typed []byte
	buf := make([]byte, 4096)
	for range 64 {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err != nil || n != 1 || fds[0].Revents != unix.POLLIN {
			break // nothing whole to read, or a hangup (whose reads end at once too)
		}
		n, err := unix.Read(fd, buf)
		switch {
		case err != nil:
			return typed // EAGAIN: another reader took it
		case n == 0:
			typed = append(typed, tio.Cc[unix.VEOF])
		default:
			typed = append(typed, buf[:n]...)
		}
	}
	return typed
}

func newFilter(out io.Writer, raw bool) *termfilter.Writer {
	if raw {
		return termfilter.NewRaw(out)
	}
	return termfilter.New(out)
}

// Wait blocks until the sandbox side of the pty is closed or ctx ends.
func (t *Terminal) Wait(ctx context.Context) {
	select {
	case <-t.done:
	case <-ctx.Done():
	}
}

// Dropped reports what the filter kept from the user's terminal.
func (t *Terminal) Dropped() termfilter.Stats { return t.filter.Stats() }

// Close ends the copy of the sandbox's output (all of it that was read is
// written first), undoes the terminal modes the sandbox left set, and
// restores the user's terminal settings. It may be called more than once.
func (t *Terminal) Close() {
	if t.closed {
		return
	}
	t.closed = true
	signal.Stop(t.winch)
	close(t.winch)
	t.master.Close()
	select {
	case <-t.done:
	case <-time.After(closeWait): // a terminal stopped with Ctrl-S
	}
	if r := t.filter.Restore(); len(r) > 0 {
		_, _ = t.out.Write(r)
	}
	if t.saved != nil {
		_ = term.Restore(int(t.in.Fd()), t.saved)
	}
}

func (t *Terminal) followSize() {
	for range t.winch {
		t.resize()
	}
}

// resize copies the user's window size to the pty. It keeps to the
// ioctls rather than term.GetSize: x/term has no setter, and the pixel
// fields of the winsize must travel too.
func (t *Terminal) resize() {
	ws, err := unix.IoctlGetWinsize(int(t.out.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return
	}
	// Through the raw conn: Fd would put the master back in blocking mode.
	if rc, err := t.master.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) })
	}
}
