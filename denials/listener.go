package denials

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/ledger"
)

// DefaultMax is how many of the agent's denials a Listener keeps; the
// ones after it are counted (ledger.DenialLayer.Dropped).
const DefaultMax = 1000

// Options configure a Listener.
type Options struct {
	// OnDenial, when set, is called with each of the agent's denials
	// (those after AgentStarted), after the caller got its EPERM, from the
	// listener's goroutine; it must not block for long.
	OnDenial func(ledger.Denial)
	// Max caps the denials kept; zero means DefaultMax.
	Max int
}

// Listener is the seccomp listener of one sandbox: the unix socket the
// runtime sends the notification fd to, and the goroutines that answer.
type Listener struct {
	// Path is the socket's path, for linux.seccomp.listenerPath.
	Path string

	opts  Options
	ln    *net.UnixListener
	stopR *os.File // readable once Stop began: every loop ends
	stopW *os.File
	wg    sync.WaitGroup

	mu      sync.Mutex
	started time.Time // when the agent was handed the sandbox; zero before
	fds     int       // notification fds received
	list    []ledger.Denial
	probes  int
	dropped int
	errs    []error
}

// Listen makes the socket at path (mode 0600: the runtime runs as the
// launcher's user) and accepts the runtime's connections until Stop.
func Listen(path string, opts Options) (*Listener, error) {
	if opts.Max <= 0 {
		opts.Max = DefaultMax
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("seccomp listener: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("seccomp listener: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		ln.Close()
		return nil, err
	}
	l := &Listener{Path: path, opts: opts, ln: ln, stopR: r, stopW: w}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// AgentStarted marks the end of the self-test: the calls notified from
// now on are the agent's and go into the list; those before were the
// probes', which make them on purpose, and are only counted.
func (l *Listener) AgentStarted() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started.IsZero() {
		l.started = time.Now().UTC()
	}
}

// Log is what a Listener recorded.
type Log struct {
	// Denials are the agent's, in the order they were answered.
	Denials []ledger.Denial
	// Layer is the seccomp layer's entry of the record: logged when a
	// notification fd arrived, with the probes' and the dropped counts.
	Layer ledger.DenialLayer
	// AgentStarted is when AgentStarted was called; zero if it never was.
	AgentStarted time.Time
}

// Stop ends every loop, closes the notification fds (a call notified
// after this fails with ENOSYS) and the socket, and returns the log.
func (l *Listener) Stop() Log {
	l.stopW.Close()
	l.ln.Close()
	l.wg.Wait()
	l.stopR.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	layer := ledger.DenialLayer{Layer: ledger.LayerSeccomp, Logged: l.fds > 0, Probes: l.probes, Dropped: l.dropped}
	if l.fds == 0 {
		layer.Detail = "the runtime never sent the seccomp notification fd to " + l.Path
	}
	if len(l.errs) > 0 {
		layer.Detail = errors.Join(l.errs...).Error()
	}
	return Log{Denials: slices.Clone(l.list), Layer: layer, AgentStarted: l.started}
}

func (l *Listener) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 4 {
		l.errs = append(l.errs, err)
	}
}

// accept takes each connection of the runtime (one per container it
// creates) and serves the fd it brings.
func (l *Listener) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return // closed by Stop
		}
		fd, err := receiveFd(c)
		c.Close()
		if err != nil {
			l.fail(fmt.Errorf("seccomp listener: %w", err))
			continue
		}
		l.mu.Lock()
		l.fds++
		l.mu.Unlock()
		l.wg.Add(1)
		go l.serve(fd)
	}
}

// maxState bounds the container state the runtime sends with the fd.
const maxState = 1 << 20

// receiveFd reads the runtime's message (runtime-spec config-linux.md,
// "seccomp"): the container process state as JSON, with the fds it names
// in state.fds passed as SCM_RIGHTS; it returns the one named seccompFd
// and closes any other.
func receiveFd(c *net.UnixConn) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var payload []byte
	var fds []int
	buf, oob := make([]byte, 64<<10), make([]byte, unix.CmsgSpace(4*4))
	for len(payload) < maxState {
		n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
		if oobn > 0 {
			got, perr := parseRights(oob[:oobn])
			if perr != nil {
				closeAll(fds)
				return -1, perr
			}
			fds = append(fds, got...)
		}
		payload = append(payload, buf[:n]...)
		if err != nil || n == 0 || json.Valid(payload) {
			break
		}
	}
	var st specs.ContainerProcessState
	if err := json.Unmarshal(payload, &st); err != nil {
		closeAll(fds)
		return -1, fmt.Errorf("the runtime's message is not a container process state: %w", err)
	}
	i := slices.Index(st.Fds, specs.SeccompFdName)
	if i < 0 || i >= len(fds) {
		closeAll(fds)
		return -1, fmt.Errorf("the runtime sent fds %v and %d descriptor(s), none of them %s", st.Fds, len(fds), specs.SeccompFdName)
	}
	fd := fds[i]
	closeAll(slices.Delete(fds, i, i+1))
	return fd, nil
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, got...)
		}
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// serve answers fd's notifications until every process of the filter is
// gone (POLLHUP) or Stop.
func (l *Listener) serve(fd int) {
	defer l.wg.Done()
	defer unix.Close(fd)
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(l.stopR.Fd()), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			l.fail(fmt.Errorf("seccomp listener: poll: %w", err))
			return
		}
		switch {
		case pfd[1].Revents != 0:
			return
		case pfd[0].Revents&unix.POLLIN != 0:
			l.answer(fd)
		case pfd[0].Revents != 0: // POLLHUP: no process uses the filter any more
			return
		}
	}
}

// answer receives one notification, refuses it and records it.
func (l *Listener) answer(fd int) {
	n, err := receive(fd)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EINTR):
		return // the caller is gone, or will call again
	case err != nil:
		l.fail(fmt.Errorf("seccomp listener: receive: %w", err))
		return
	}
	// The phase is the call's: decided before the caller is answered, so
	// that a probe's call answered while AgentStarted runs is still the
	// probe's.
	agent := l.agentPhase()
	c := call{notif: n, name: syscallName(n.Data)}
	if agent {
		// Only the agent's calls are read about: the probes' are only
		// counted (record), and a probe has its EPERM without waiting
		// for its /proc/PID/comm and memory to be read.
		c = describe(fd, n)
	}
	now := time.Now().UTC()
	switch err := refuse(fd, n.ID); {
	case errors.Is(err, unix.ENOENT):
		// The caller stopped waiting before the answer: a signal
		// interrupted it (Go's preemption, say), and the kernel restarts
		// the call, which notifies anew and is recorded then; or it was
		// killed. Either way this notification is not an attempt of its own.
		return
	case err != nil:
		l.fail(fmt.Errorf("seccomp listener: answer %s: %w", c.name, err))
	}
	l.record(ledger.Denial{Time: now, Layer: ledger.LayerSeccomp, Syscall: c.name, PID: int(n.PID), Comm: c.comm, Args: c.args}, agent)
}

// agentPhase is true once AgentStarted was called.
func (l *Listener) agentPhase() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.started.IsZero()
}

func (l *Listener) record(d ledger.Denial, agent bool) {
	l.mu.Lock()
	switch {
	case !agent:
		l.probes++
		l.mu.Unlock()
		return
	case len(l.list) >= l.opts.Max:
		l.dropped++
		l.mu.Unlock()
		return
	}
	l.list = append(l.list, d)
	l.mu.Unlock()
	if l.opts.OnDenial != nil {
		l.opts.OnDenial(d)
	}
}
