//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/agentbox/agentbox/netpolicy/bridge"
	"github.com/agentbox/agentbox/selftest"
	"golang.org/x/sys/unix"
)

// initMain is the init protocol, as named steps; each failure is reported
// to the launcher and ends init with ExitInitFailed (or 126/127 for exec).
func initMain() int {
	conn, err := openInitFD()
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentbox-init: %v (start agentbox-init through agentbox, which passes fd %d)\n", err, selftest.InitFD)
		return selftest.ExitInitFailed
	}
	// conn is never closed here: the exit closes it, and the watcher takes
	// any error on it for the launcher's end closing.
	fail := func(code int, step string, err error) int {
		reason := fmt.Sprintf("%s: %v", step, err)
		_ = conn.Send(selftest.Message{Type: selftest.MsgError, Reason: reason})
		fmt.Fprintln(os.Stderr, "agentbox-init:", reason)
		return code
	}
	// Not dumpable: even where the agent shares init's uid (a sandbox with
	// one id), it can neither ptrace init nor open its fds through /proc.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(selftest.ExitInitFailed, "set non-dumpable", err)
	}
	// Outside a PID namespace (tests, --probe runs) orphans would escape
	// to the host's init; as a subreaper init collects them itself.
	if os.Getpid() != 1 {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	// The probe process starts first, before the configuration is read:
	// its Go start-up overlaps init's own work until the probes can begin.
	// Who it becomes and what it runs it is told once the bridge is up.
	probes, probeErr := spawnProbes()
	cfg, err := receiveConfig(conn)
	if err != nil {
		probes.kill()
		return fail(selftest.ExitInitFailed, "config", err)
	}
	watch := watchLauncher(conn)
	if err := startBridge(cfg.Bridge); err != nil {
		probes.kill()
		return fail(selftest.ExitInitFailed, "gateway bridge", err)
	}
	if probeErr == nil {
		probes.request(cfg)
	}
	// The agent's starter becomes the agent while the probes run: both are
	// children started the same way, neither sees the other's fds, and the
	// launcher verifies the starter from the host once it is ready, beside
	// the probes. Its start (a process, the agent's ids, the seccomp
	// filter) and that verification are then off the launch's critical
	// path.
	starting := make(chan startResult, 1)
	go func() {
		s, err := startAs(cfg.Agent.User, cfg.Agent.Seccomp, agentEnv(cfg), [3]uintptr{0, 1, 2}, controllingTerminal(0), cfg.Agent.Protect)
		if err == nil {
			// It is the agent now and only prepares and waits from here:
			// the launcher may verify it from the host beside the probes.
			// (A failed send leaves that to after them; the results say
			// why the channel broke.)
			_ = conn.Send(selftest.Message{Type: selftest.MsgAgentReady, PID: s.pid})
		}
		if err == nil && len(cfg.Agent.Args) > 0 {
			// It prepares the agent's start (directory, path, Landlock
			// rulesets) while the probes run, and executes it at the go.
			if err = s.hold(agentRequest(cfg.Agent, cfg.Landlock)); err != nil {
				s.kill()
			}
		}
		starting <- startResult{s, err}
	}()
	if err := runProbes(conn, cfg, probes, probeErr); err != nil {
		if r := <-starting; r.s != nil {
			r.s.kill()
		}
		return fail(selftest.ExitInitFailed, "probes", err)
	}
	r := <-starting
	if r.err != nil {
		return fail(selftest.ExitInitFailed, "agent's starter", r.err)
	}
	agent := r.s
	if err := conn.Send(selftest.Message{Type: selftest.MsgProbesDone, PID: agent.pid}); err != nil {
		agent.kill()
		return fail(selftest.ExitInitFailed, "probes", err)
	}
	if cfg.Agent.User != nil && len(cfg.Agent.Args) > 0 {
		// Every child is started: from here on init needs CAP_KILL alone.
		// It drops the rest while the launcher judges the results, not
		// after the go.
		if err := keepOnlyKill(); err != nil {
			agent.kill()
			return fail(selftest.ExitInitFailed, "keep only CAP_KILL", err)
		}
	}
	if err := awaitGo(watch, cfg); err != nil {
		agent.kill()
		return fail(selftest.ExitInitFailed, "go", err)
	}
	if len(cfg.Agent.Args) == 0 {
		agent.cancel()
		return 0 // a probe-only run (agentbox selftest): nothing to start
	}
	sup := newSupervisor()
	ll, code, err := startAgent(agent, cfg.Agent)
	if err != nil {
		return fail(code, "start agent", err)
	}
	if err := conn.Send(selftest.Message{Type: selftest.MsgStarted, PID: agent.pid, Landlock: &ll}); err != nil {
		fmt.Fprintln(os.Stderr, "agentbox-init: report start:", err)
	}
	code = sup.supervise(agent.pid)
	_ = conn.Send(selftest.Message{Type: selftest.MsgExit, Code: &code})
	return code
}

// startResult is a starter started in the background, or why it was not.
type startResult struct {
	s   *starter
	err error
}

// agentEnv is the environment the probes judge and the agent gets: the
// config's, or, in a probe-only run that names no agent, init's own (the
// sandbox's process environment, which the launcher sets to the agent's).
func agentEnv(cfg selftest.InitConfig) []string {
	if cfg.Agent.Env != nil {
		return cfg.Agent.Env
	}
	return os.Environ()
}

// controllingTerminal reports whether fd is init's controlling terminal
// (the sandbox's pty): only that one can get the agent as its foreground
// group. A terminal that merely is fd 0 (the user's, passed through when
// stdout is not one) cannot.
func controllingTerminal(fd int) bool {
	_, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil
}

// openInitFD takes fd 3 and keeps it from every child.
func openInitFD() (*selftest.Conn, error) {
	if _, err := unix.FcntlInt(uintptr(selftest.InitFD), unix.F_GETFD, 0); err != nil {
		return nil, fmt.Errorf("fd %d: %w", selftest.InitFD, err)
	}
	unix.CloseOnExec(selftest.InitFD)
	f := os.NewFile(uintptr(selftest.InitFD), "agentbox-init")
	defer f.Close()
	return selftest.NewConn(f)
}

func receiveConfig(conn *selftest.Conn) (selftest.InitConfig, error) {
	m, err := conn.Recv(context.Background())
	if err != nil {
		return selftest.InitConfig{}, err
	}
	if m.Type != selftest.MsgConfig || m.Config == nil {
		return selftest.InitConfig{}, fmt.Errorf("first message is %q, want %q", m.Type, selftest.MsgConfig)
	}
	return *m.Config, m.Config.Validate()
}

// runProbes relays the results of the probe process (a starter that runs
// the probes itself once it has become the agent, see probeInPlace), which
// has the agent's environment and directory, so that they stand where the
// agent will: another uid than init, not PID 1, a child of init. Every
// selected probe that the child does not report on is sent as UNKNOWN,
// with startErr when the child could not be started or told.
func runProbes(conn *selftest.Conn, cfg selftest.InitConfig, child *probeProcess, startErr error) error {
	probes, err := selftest.Selected(&cfg)
	if err != nil {
		child.kill()
		return err
	}
	seen, err := map[string]bool{}, startErr
	if err == nil {
		// Results that arrived together leave together (Conn.Queue,
		// flushed whenever the probe process has nothing more waiting).
		err = child.results(seen, func(r selftest.Result) error {
			return conn.Queue(selftest.Message{Type: selftest.MsgResult, Result: &r})
		}, conn.Flush)
	}
	for _, p := range probes {
		if !seen[p.Name] {
			r := selftest.NoResult(p, cfg.RunID, err)
			if err := conn.Send(selftest.Message{Type: selftest.MsgResult, Result: &r}); err != nil {
				return err
			}
		}
	}
	return nil
}

// probeProcess is the probe process: a starter whose stdout init reads.
type probeProcess struct {
	s       *starter
	out     *os.File
	sendErr error
	killed  bool
}

// spawnProbes starts the probe process with init's own environment (the
// sandbox's process environment, which the launcher sets to the agent's;
// the probes get the configuration's in their request). Its stdin is a
// pipe at its end, as the probe program left it once it had read its
// configuration there.
func spawnProbes() (*probeProcess, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	s, err := spawn(os.Environ(), [3]uintptr{inR.Fd(), outW.Fd(), 2}, false, nil)
	inR.Close()
	inW.Close()
	outW.Close()
	if err != nil {
		outR.Close()
		return nil, err
	}
	return &probeProcess{s: s, out: outR}, nil
}

// request tells the probe process who to become and which probes to run,
// both at once: it reads the second once it is the agent. A write that
// fails (the child is gone) is reported by results, after the child's own
// word on why, if it left one.
func (p *probeProcess) request(cfg selftest.InitConfig) {
	p.sendErr = p.s.send(becomeRequest{User: cfg.Agent.User, Seccomp: cfg.Agent.Seccomp})
	if p.sendErr == nil {
		p.sendErr = p.s.send(execRequest{Probes: &cfg, Env: agentEnv(cfg), Dir: cfg.Agent.Dir})
	}
	p.s.req.Close()
}

// results waits for the probe process to become the agent and begin, and
// hands each result line it prints to emit (seen records them), calling
// flush whenever no further line is waiting.
func (p *probeProcess) results(seen map[string]bool, emit func(selftest.Result) error, flush func() error) error {
	defer p.out.Close()
	if err := p.s.awaitReady(); err != nil {
		return err
	}
	if p.sendErr != nil {
		p.kill()
		return fmt.Errorf("tell the probe process its work: %w", p.sendErr)
	}
	if st := p.s.awaitExec(); st.Error != "" {
		reapPid(p.s.pid)
		return errors.New(st.Error)
	}
	err := selftest.ReadResultsBatched(p.out, seen, emit, flush)
	if err != nil {
		_ = unix.Kill(p.s.pid, unix.SIGKILL)
	}
	ws := reapPid(p.s.pid)
	if err == nil && !(ws.Exited() && ws.ExitStatus() <= 1) {
		err = fmt.Errorf("the probe process ended with %v", ws) // 1 means some probe failed, which the results say
	}
	return err
}

// kill ends the probe process, if there is one still to end.
func (p *probeProcess) kill() {
	if p == nil || p.killed {
		return
	}
	p.killed = true
	p.s.kill()
	p.out.Close()
}

// awaitGo waits for the launcher's go when the config asks for it.
func awaitGo(w *launcherWatch, cfg selftest.InitConfig) error {
	if !cfg.WaitGo {
		return nil
	}
	switch m := w.next(); m.Type {
	case selftest.MsgGo:
		return nil
	case selftest.MsgAbort:
		return fmt.Errorf("launch aborted by the launcher: %s", m.Reason)
	default:
		return fmt.Errorf("got %q, want %q or %q", m.Type, selftest.MsgGo, selftest.MsgAbort)
	}
}

func dirOrRoot(d string) string {
	if d == "" {
		return "/"
	}
	return d
}

// startBridge relays 127.0.0.1:PORT and [::1]:PORT to the gateway's socket
// for the rest of init's life: the probes use it first, then the agent.
// Init serves it, outside the agent's Landlock domain.
func startBridge(c *selftest.Bridge) error {
	if c == nil {
		return nil
	}
	bc := bridge.Config{Port: c.Port, Socket: c.Socket, Addrs: loopbackAddrs()}
	if c.Dialer {
		if _, err := unix.FcntlInt(uintptr(selftest.DialerFD), unix.F_GETFD, 0); err != nil {
			return fmt.Errorf("bridge dialer fd %d: %w", selftest.DialerFD, err)
		}
		unix.CloseOnExec(selftest.DialerFD) // the agent never gets it
		d, err := bridge.NewDialer(os.NewFile(uintptr(selftest.DialerFD), "bridge-dialer"))
		if err != nil {
			return err
		}
		bc.Dial = d.Dial
	}
	b, err := bridge.Listen(bc)
	if err != nil {
		return err
	}
	go func() { _ = b.Serve(context.Background()) }()
	return nil
}

// loopbackAddrs are the loopback addresses this network namespace has:
// 127.0.0.1, and ::1 unless IPv6 is off here.
func loopbackAddrs() []string {
	addrs := []string{"127.0.0.1"}
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return addrs
	}
	for _, a := range ifaces {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.Equal(net.IPv6loopback) {
			return append(addrs, "::1")
		}
	}
	return addrs
}
