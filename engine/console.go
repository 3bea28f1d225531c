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

	"golang.org/x/sys/unix"
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
	return os.NewFile(uintptr(fds[0]), "pty-master"), nil
}

// Terminal proxies the user's terminal to a sandbox's pty: in raw mode,
// following window size changes. Close restores the terminal.
type Terminal struct {
	in, out *os.File
	master  *os.File
	saved   *unix.Termios
	winch   chan os.Signal
	done    chan struct{}
}

// ProxyTerminal starts copying between in/out and master.
func ProxyTerminal(in, out, master *os.File) (*Terminal, error) {
	t := &Terminal{in: in, out: out, master: master, winch: make(chan os.Signal, 1), done: make(chan struct{})}
	saved, err := makeRaw(int(in.Fd()))
	if err != nil {
		return nil, fmt.Errorf("terminal: raw mode: %w", err)
	}
	t.saved = saved
	t.resize()
	signal.Notify(t.winch, syscall.SIGWINCH)
	go t.followSize()
	go func() { _, _ = io.Copy(master, in) }()
	go func() { _, _ = io.Copy(out, master); close(t.done) }()
	return t, nil
}

// Wait blocks until the sandbox side of the pty is closed or ctx ends.
func (t *Terminal) Wait(ctx context.Context) {
	select {
	case <-t.done:
	case <-ctx.Done():
	}
}

// Close restores the user's terminal and closes the master.
func (t *Terminal) Close() {
	signal.Stop(t.winch)
	close(t.winch)
	if t.saved != nil {
		_ = unix.IoctlSetTermios(int(t.in.Fd()), unix.TCSETS, t.saved)
	}
	t.master.Close()
}

func (t *Terminal) followSize() {
	for range t.winch {
		t.resize()
	}
}

func (t *Terminal) resize() {
	ws, err := unix.IoctlGetWinsize(int(t.out.Fd()), unix.TIOCGWINSZ)
	if err == nil {
		_ = unix.IoctlSetWinsize(int(t.master.Fd()), unix.TIOCSWINSZ, ws)
	}
}

// makeRaw puts fd in raw mode (cfmakeraw) and returns the previous state.
func makeRaw(fd int) (*unix.Termios, error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, err
	}
	return old, nil
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
