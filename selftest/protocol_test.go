package selftest

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProtocol plays init's side by hand against a Launcher.
func TestProtocol(t *testing.T) {
	l, initEnd, err := NewLauncher()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	side, err := NewConn(initEnd)
	initEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cfg := InitConfig{Version: ProtocolVersion, RunID: "r1", WaitGo: true, Agent: Command{Args: []string{"true"}}}
	if err := l.Configure(cfg); err != nil {
		t.Fatal(err)
	}
	m, err := side.Recv(ctx)
	if err != nil || m.Type != MsgConfig || cmp.Diff(cfg, *m.Config) != "" {
		t.Fatalf("config: %+v %v", m, err)
	}
	res := Result{Probe: "p", Expect: Deny, Decision: Deny, RunID: "r1"}
	code := 3
	var ready []int
	l.OnAgentReady(func(pid int) { ready = append(ready, pid) })
	go func() {
		_ = side.Send(Message{Type: MsgAgentReady, PID: 7})
		_ = side.Send(Message{Type: MsgResult, Result: &res})
		_ = side.Send(Message{Type: MsgProbesDone, PID: 7})
		if g, err := side.Recv(ctx); err != nil || g.Type != MsgGo {
			t.Errorf("go: %+v %v", g, err)
		}
		_ = side.Send(Message{Type: MsgStarted, PID: 2, Landlock: &LandlockStatus{ABI: 7, FS: true}})
		_ = side.Send(Message{Type: MsgExit, Code: &code})
	}()
	got, err := l.Results(ctx)
	if err != nil || cmp.Diff([]Result{res}, got) != "" {
		t.Fatalf("results: %v %v", got, err)
	}
	if l.AgentPID() != 7 {
		t.Errorf("agent pid %d, want 7 from probes-done", l.AgentPID())
	}
	if !slices.Equal(ready, []int{7}) {
		t.Errorf("OnAgentReady called with %v, want [7] once, among the results", ready)
	}
	if err := l.Go(); err != nil {
		t.Fatal(err)
	}
	st, err := l.Started(ctx)
	if err != nil || st.PID != 2 || st.Landlock.ABI != 7 {
		t.Fatalf("started: %+v %v", st, err)
	}
	if c, err := l.Wait(ctx); err != nil || c != 3 {
		t.Fatalf("exit: %d %v", c, err)
	}
}

// Init ends the sandbox when the channel closes, so no process but the
// launcher may hold the launcher's end: a child the launcher starts (the
// runtime, for one) does not inherit it, and closing it, or dying, is EOF
// on init's side at once.
func TestLauncherEndIsTheLaunchersAlone(t *testing.T) {
	l, initEnd, err := NewLauncher()
	if err != nil {
		t.Fatal(err)
	}
	side, err := NewConn(initEnd)
	initEnd.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := side.Recv(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("init's side after the launcher closed its end, with a child of the launcher alive: %v, want EOF", err)
	}
}

func TestProtocolErrors(t *testing.T) {
	l, initEnd, err := NewLauncher()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	side, _ := NewConn(initEnd)
	initEnd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Configure(InitConfig{Version: 9}); err == nil {
		t.Error("Configure sent an invalid config")
	}
	_ = side.Send(Message{Type: MsgError, Reason: "landlock: too old"})
	if _, err := l.Results(ctx); err == nil || err.Error() != "agentbox-init: landlock: too old" {
		t.Errorf("init error: %v", err)
	}
	_ = side.Send(Message{Type: MsgStarted})
	if _, err := l.Results(ctx); err == nil {
		t.Error("an out-of-order message was accepted")
	}
	side.Close()
	if _, err := l.Started(ctx); err == nil {
		t.Error("EOF was not an error")
	}
	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	l2, end2, _ := NewLauncher()
	defer l2.Close()
	defer end2.Close()
	if _, err := l2.Results(short); err == nil {
		t.Error("Results did not honour the deadline")
	}
}

// What the launcher says when init sends what it did not wait for, or
// goes away: what init reported, what the launcher waited for, and what to
// do, in the user's words (not the protocol's message names).
func TestProtocolErrorsSayWhatInitDid(t *testing.T) {
	code := 7
	tests := []struct {
		name string
		send func(*Conn)
		recv func(context.Context, *Launcher) error
		want []string
	}{
		{
			"exit before the results", func(c *Conn) { _ = c.Send(Message{Type: MsgExit, Code: &code}) },
			func(ctx context.Context, l *Launcher) error { _, err := l.Results(ctx); return err },
			[]string{"the agent exited with status 7", "waited for the probe results", "make build"},
		},
		{
			"unknown message", func(c *Conn) { _ = c.Send(Message{Type: "hello\n"}) },
			func(ctx context.Context, l *Launcher) error { _, err := l.Started(ctx); return err },
			[]string{`"hello\n"`, "waited for the agent's start", "AGENTBOX_INIT"},
		},
		{
			"result without a result", func(c *Conn) { _ = c.Send(Message{Type: MsgResult}) },
			func(ctx context.Context, l *Launcher) error { _, err := l.Results(ctx); return err },
			[]string{`"result" message without its content`},
		},
		{
			"channel closed", func(c *Conn) { c.Close() },
			func(ctx context.Context, l *Launcher) error { _, err := l.Wait(ctx); return err },
			[]string{"closed its channel before it reported the agent's exit status", "exited or was killed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, initEnd, err := NewLauncher()
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			side, err := NewConn(initEnd)
			initEnd.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer side.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tt.send(side)
			err = tt.recv(ctx, l)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
