package selftest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Message types of the init protocol, in the order they are sent.
const (
	MsgConfig     = "config"      // launcher → init: the InitConfig
	MsgResult     = "result"      // init → launcher: one probe Result
	MsgAgentReady = "agent-ready" // init → launcher, among the results: pid of the agent-to-be, now as it will start
	MsgProbesDone = "probes-done" // init → launcher: no more results; pid of the agent-to-be
	MsgGo         = "go"          // launcher → init: start the agent
	MsgAbort      = "abort"       // launcher → init: exit without starting it
	MsgStarted    = "started"     // init → launcher: agent pid and Landlock status
	MsgExit       = "exit"        // init → launcher: the agent's exit code
	MsgError      = "error"       // init → launcher: init failed; Reason says why
)

// Exit codes of agentbox-init itself; otherwise it exits with the agent's.
const (
	ExitInitFailed = 125 // bad config, protocol error, Landlock refused, or aborted
	ExitCannotExec = 126 // the agent could not be started
	ExitNotFound   = 127 // the agent's executable was not found
)

// InitFD is the fd agentbox-init reads its protocol from (runc --preserve-fds=1).
const InitFD = 3

// maxLine bounds one protocol line.
const maxLine = 1 << 20

// Message is one JSON line of the init protocol.
type Message struct {
	Type     string          `json:"type"`
	Config   *InitConfig     `json:"config,omitempty"`
	Result   *Result         `json:"result,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	PID      int             `json:"pid,omitempty"`
	Landlock *LandlockStatus `json:"landlock,omitempty"`
	Code     *int            `json:"code,omitempty"`
}

// Conn carries Messages as JSON lines over a stream socket.
type Conn struct {
	c net.Conn
	r *bufio.Reader
	// mu guards queued, the lines Queue holds until Flush or Send.
	mu     sync.Mutex
	queued []byte
}

// NewConn wraps f, one end of a unix stream socketpair. f stays owned by
// the caller, who may close it once NewConn returns.
func NewConn(f *os.File) (*Conn, error) {
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("init fd: %w", err)
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// Send writes m as one line, after every line Queue holds.
func (c *Conn) Send(m Message) error {
	if err := c.Queue(m); err != nil {
		return err
	}
	return c.Flush()
}

// Queue adds m as one line to what the next Flush or Send writes.
func (c *Conn) Queue(m Message) error {
	b, err := marshalMessage(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.Type, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queued = append(append(c.queued, b...), '\n')
	return nil
}

// Flush writes the lines Queue holds, in one write.
func (c *Conn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queued) == 0 {
		return nil
	}
	_, err := c.c.Write(c.queued)
	c.queued = c.queued[:0]
	return err
}

// Recv reads the next message, waiting at most until ctx's deadline.
func (c *Conn) Recv(ctx context.Context) (Message, error) {
	dl, _ := ctx.Deadline()
	_ = c.c.SetReadDeadline(dl)
	var line []byte
	for {
		part, isPrefix, err := c.r.ReadLine()
		if err != nil {
			return Message{}, err
		}
		line = append(line, part...)
		if len(line) > maxLine {
			return Message{}, errors.New("protocol line longer than 1 MiB")
		}
		if !isPrefix {
			break
		}
	}
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return Message{}, fmt.Errorf("decode protocol line: %w", err)
	}
	return m, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Launcher is the launcher's end of the init protocol.
type Launcher struct {
	conn     *Conn
	agentPID int
	// onReady is called with the agent-to-be's pid when init reports it
	// ready, from the goroutine reading the results (OnAgentReady).
	onReady func(pid int)
	// first and last are when Results read its first and last result.
	first, last time.Time
}

// Started is what init reports once the agent runs.
type Started struct {
	PID      int            // the agent's pid inside the sandbox
	Landlock LandlockStatus // what Landlock enforces on it
}

// NewLauncher makes the socketpair. It returns the launcher's end and the
// file to hand to init as fd 3 (exec.Cmd.ExtraFiles[0] of runc, with
// `runc run --preserve-fds 1`); close that file after the runtime started.
//
// The launcher's end is close-on-exec and is never handed to any process:
// it is open exactly as long as the launcher holds it, so init sees the
// channel close when the launcher closes it (in teardown) or dies, and then
// ends the sandbox. Keep it open for the whole run.
func NewLauncher() (*Launcher, *os.File, error) {
	fds, err := socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "agentbox-launcher")
	defer mine.Close()
	conn, err := NewConn(mine)
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, err
	}
	return &Launcher{conn: conn}, os.NewFile(uintptr(fds[1]), "agentbox-init"), nil
}

// Configure sends cfg, which must validate.
func (l *Launcher) Configure(cfg InitConfig) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("init config: %w", err)
	}
	return l.conn.Send(Message{Type: MsgConfig, Config: &cfg})
}

// OnAgentReady has Results call fn with the pid of init's child that will
// become the agent once init reports that child ready (MsgAgentReady),
// which it does before the probes: from then on the child has the
// credentials, namespaces and filter it will execute the agent with (it
// runs the probes itself, which change none of them), so that the host
// may verify it beside them. fn
// runs once, on the goroutine calling Results, and must not block;
// AgentPID stays what probes-done reports.
func (l *Launcher) OnAgentReady(fn func(pid int)) { l.onReady = fn }

// Results reads the probe results until init says it is done. An error
// message from init, or the connection closing first, is an error.
func (l *Launcher) Results(ctx context.Context) ([]Result, error) {
	var out []Result
	for {
		m, err := l.recv(ctx, MsgResult, MsgAgentReady, MsgProbesDone)
		if err != nil {
			return out, err
		}
		switch m.Type {
		case MsgAgentReady:
			if fn := l.onReady; fn != nil && m.PID > 0 {
				l.onReady = nil // once: probes-done names the child for good
				fn(m.PID)
			}
			continue
		case MsgProbesDone:
			l.agentPID = m.PID
			return out, nil
		}
		l.last = time.Now()
		if len(out) == 0 {
			l.first = l.last
		}
		out = append(out, *m.Result)
	}
}

// ResultTimes are when Results read the first and the last probe result
// (zero before any): what the launcher's trace splits the self-test by.
func (l *Launcher) ResultTimes() (first, last time.Time) { return l.first, l.last }

// AgentPID is the pid, in the sandbox's PID namespace, of init's child that
// will become the agent, as "probes-done" reported it: it already runs under
// the agent's ids, without capabilities, and waits for the go, so that the
// host can verify the agent's credentials before anything runs. Zero before
// Results returned, or when init reported none.
func (l *Launcher) AgentPID() int { return l.agentPID }

// Go tells init to start the agent (only when InitConfig.WaitGo was set).
func (l *Launcher) Go() error { return l.conn.Send(Message{Type: MsgGo}) }

// Abort tells init to exit with ExitInitFailed without starting the agent.
func (l *Launcher) Abort(reason string) error {
	return l.conn.Send(Message{Type: MsgAbort, Reason: reason})
}

// Started waits for init to report the agent running.
func (l *Launcher) Started(ctx context.Context) (Started, error) {
	m, err := l.recv(ctx, MsgStarted)
	if err != nil {
		return Started{}, err
	}
	s := Started{PID: m.PID}
	if m.Landlock != nil {
		s.Landlock = *m.Landlock
	}
	return s, nil
}

// Wait waits for the agent's exit code as init reports it.
func (l *Launcher) Wait(ctx context.Context) (int, error) {
	m, err := l.recv(ctx, MsgExit)
	if err != nil {
		return 0, err
	}
	return *m.Code, nil
}

// Close closes the launcher's end; init then sees EOF.
func (l *Launcher) Close() error { return l.conn.Close() }

// recv reads one message of the wanted types; init's error message is
// returned as an InitError.
func (l *Launcher) recv(ctx context.Context, want ...string) (Message, error) {
	m, err := l.conn.Recv(ctx)
	switch {
	case errors.Is(err, io.EOF):
		return m, fmt.Errorf("agentbox-init closed its channel before it reported %s: it exited or was killed (its own agentbox-init: lines, if any, are above): %w", waitingFor(want), err)
	case err != nil:
		return m, fmt.Errorf("read from agentbox-init while waiting for %s: %w", waitingFor(want), err)
	case m.Type == MsgError:
		return m, &InitError{Reason: m.Reason}
	}
	for _, w := range want {
		if m.Type == w && (w != MsgResult || m.Result != nil) && (w != MsgExit || m.Code != nil) {
			return m, nil
		}
	}
	return m, &ProtocolError{Got: m, Want: want}
}

// ProtocolError is a message from init that the launcher did not wait for:
// an agentbox-init of another build, or one that went wrong.
type ProtocolError struct {
	Got  Message  // what init sent
	Want []string // the message types the launcher waited for
}

func (e *ProtocolError) Error() string {
	var what string
	switch m := e.Got; {
	case m.Type == MsgExit && m.Code != nil:
		what = fmt.Sprintf("agentbox-init reported that the agent exited with status %d", *m.Code)
	case m.Type == MsgResult || m.Type == MsgExit:
		what = fmt.Sprintf("agentbox-init sent a %q message without its content", m.Type)
	default:
		what = fmt.Sprintf("agentbox-init sent a %q message", clip(m.Type))
	}
	return fmt.Sprintf("%s while agentbox waited for %s: this agentbox-init speaks another version of the init protocol, or failed (its own agentbox-init: lines, if any, are above); "+
		"rebuild both with 'make build', or point AGENTBOX_INIT at the agentbox-init built with this agentbox", what, waitingFor(e.Want))
}

// waitingFor says in words what the launcher waits for when it waits for
// the message types want.
func waitingFor(want []string) string {
	switch {
	case slices.Contains(want, MsgResult), slices.Contains(want, MsgProbesDone):
		return "the probe results"
	case slices.Contains(want, MsgStarted):
		return "the agent's start"
	case slices.Contains(want, MsgExit):
		return "the agent's exit status"
	}
	return strings.Join(want, " or ")
}

// clip bounds a string init sent (it runs in the sandbox) for an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// InitError is a failure init reported before starting the agent.
type InitError struct{ Reason string }

func (e *InitError) Error() string { return "agentbox-init: " + e.Reason }
