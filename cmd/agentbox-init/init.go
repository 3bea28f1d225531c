//go:build linux

package main

import (
	"context"
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
	// The agent's process starts first, before the configuration is read:
	// its Go start-up overlaps init's own work until it can become the
	// agent. It runs the probes there and then waits, parked, for the
	// launcher's go (starter).
	go warmJSON() // beside the spawn, before the configuration's decoding
	tty := controllingTerminal(0)
	child, err := spawn([3]uintptr{0, 1, 2}, tty, nil)
	cfg, cerr := receiveConfig(conn)
	if cerr != nil {
		child.kill()
		return fail(selftest.ExitInitFailed, "config", cerr)
	}
	watch := watchLauncher(conn)
	if err := startBridge(cfg.Bridge); err != nil {
		child.kill()
		return fail(selftest.ExitInitFailed, "gateway bridge", err)
	}
	if p := cfg.Agent.Protect; err == nil && p != nil && len(p.Binds) > 0 {
		// Its binds need a mount namespace of its own from its fork on
		// (--isolation user), which the early child has not: one that has
		// takes its place.
		child.kill()
		child, err = spawn([3]uintptr{0, 1, 2}, tty, p)
	}
	// Its only child is started, and is the agent's: it had the
	// capabilities to become the agent at its fork, and from then on init
	// needs CAP_KILL alone. Init drops the rest while the child becomes the
	// agent: before any probe runs, and off the way from the probes' end
	// to the go (each change stops every thread of init, which took 1 to
	// 8 ms there).
	var dropped func() error
	if cfg.Agent.User != nil && len(cfg.Agent.Args) > 0 {
		dropped = func() error {
			if err := keepOnlyKill(); err != nil {
				return fmt.Errorf("keep only CAP_KILL: %w", err)
			}
			return nil
		}
	}
	if err == nil {
		err = child.become(becomeRequest{User: cfg.Agent.User, Terminal: tty, Seccomp: cfg.Agent.Seccomp, Protect: cfg.Agent.Protect},
			execRequest{Args: cfg.Agent.Args, Env: agentEnv(cfg), Dir: cfg.Agent.Dir, Landlock: cfg.Landlock, Probes: &cfg, Hold: true}, dropped)
	}
	if err == nil {
		// It is the agent now and runs only the probes and its own
		// preparation from here: the launcher may verify it from the host
		// beside the probes. (A failed send leaves that to after them; the
		// results say why the channel broke.)
		_ = conn.Send(selftest.Message{Type: selftest.MsgAgentReady, PID: child.pid})
	}
	if err := runProbes(conn, cfg, child, err); err != nil {
		child.kill()
		return fail(selftest.ExitInitFailed, "probes", err)
	}
	agent := child
	if err := conn.Send(selftest.Message{Type: selftest.MsgProbesDone, PID: agent.pid}); err != nil {
		agent.kill()
		return fail(selftest.ExitInitFailed, "probes", err)
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

// runProbes relays the results of the probes that the agent's process
// runs once it has become the agent (starter.probed, probeFirst), with the
// agent's environment and directory, so that they stand where the agent
// will: another uid than init, not PID 1, a child of init, the very
// process. Every selected probe that the child does not report on is sent
// as UNKNOWN, with startErr when the child could not be started or told,
// or with why it failed; that failure is then the error (there is no
// agent's process left to start), as is a broken channel.
func runProbes(conn *selftest.Conn, cfg selftest.InitConfig, child *starter, startErr error) error {
	probes, err := selftest.Selected(&cfg)
	if err != nil {
		return err
	}
	seen, err := map[string]bool{}, startErr
	if err == nil {
		// Results that arrived together leave together (Conn.Queue,
		// flushed whenever the child has nothing more waiting).
		err = child.probed(seen, func(r selftest.Result) error {
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
	if err != nil {
		return fmt.Errorf("the agent's process: %w", err)
	}
	return nil
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
