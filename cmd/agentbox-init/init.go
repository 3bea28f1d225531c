package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"

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
	defer conn.Close()
	fail := func(code int, step string, err error) int {
		reason := fmt.Sprintf("%s: %v", step, err)
		_ = conn.Send(selftest.Message{Type: selftest.MsgError, Reason: reason})
		fmt.Fprintln(os.Stderr, "agentbox-init:", reason)
		return code
	}
	// Not dumpable: the agent, same uid, can neither ptrace init nor open
	// its fds through /proc.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(selftest.ExitInitFailed, "set non-dumpable", err)
	}
	// Outside a PID namespace (tests, --probe runs) orphans would escape
	// to the host's init; as a subreaper init collects them itself.
	if os.Getpid() != 1 {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
	cfg, err := receiveConfig(conn)
	if err != nil {
		return fail(selftest.ExitInitFailed, "config", err)
	}
	if err := startBridge(cfg.Bridge); err != nil {
		return fail(selftest.ExitInitFailed, "gateway bridge", err)
	}
	if err := runProbes(conn, cfg); err != nil {
		return fail(selftest.ExitInitFailed, "probes", err)
	}
	if err := awaitGo(conn, cfg); err != nil {
		return fail(selftest.ExitInitFailed, "go", err)
	}
	if len(cfg.Agent.Args) == 0 {
		return 0 // a probe-only run (agentbox selftest): nothing to start
	}
	sup := newSupervisor()
	pid, ll, code, err := startAgent(cfg.Agent, cfg.Landlock)
	if err != nil {
		return fail(code, "start agent", err)
	}
	if err := conn.Send(selftest.Message{Type: selftest.MsgStarted, PID: pid, Landlock: &ll}); err != nil {
		fmt.Fprintln(os.Stderr, "agentbox-init: report start:", err)
	}
	code = sup.supervise(pid)
	_ = conn.Send(selftest.Message{Type: selftest.MsgExit, Code: &code})
	return code
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

// runProbes runs the probes in a child (this binary, --probe all) with the
// agent's environment and directory, so that they stand where the agent
// will: not PID 1, a child of init. Every selected probe that the child
// does not report on is sent as UNKNOWN.
func runProbes(conn *selftest.Conn, cfg selftest.InitConfig) error {
	probes, err := selftest.Selected(&cfg)
	if err != nil {
		return err
	}
	seen, err := probeChild(cfg, func(r selftest.Result) error {
		return conn.Send(selftest.Message{Type: selftest.MsgResult, Result: &r})
	})
	for _, p := range probes {
		if !seen[p.Name] {
			r := selftest.Result{
				Probe: p.Name, Target: "-", Expect: p.Expect, Decision: selftest.Unknown,
				Observed: "no-result", RunID: cfg.RunID, Detail: fmt.Sprintf("the probe process gave no result (%v)", err),
			}
			r.Evidence = r.Digest()
			if err := conn.Send(selftest.Message{Type: selftest.MsgResult, Result: &r}); err != nil {
				return err
			}
		}
	}
	return conn.Send(selftest.Message{Type: selftest.MsgProbesDone})
}

func probeChild(cfg selftest.InitConfig, emit func(selftest.Result) error) (map[string]bool, error) {
	seen := map[string]bool{}
	in, err := json.Marshal(cfg)
	if err != nil {
		return seen, err
	}
	cmd := exec.Command("/proc/self/exe", "--probe", "all", "--json")
	cmd.Env, cmd.Dir, cmd.Stderr = cfg.Agent.Env, dirOrRoot(cfg.Agent.Dir), os.Stderr
	cmd.Stdin = bytesReader(in)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return seen, err
	}
	if err := cmd.Start(); err != nil {
		return seen, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r selftest.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || seen[r.Probe] {
			continue
		}
		seen[r.Probe] = true
		if err := emit(r); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return seen, err
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil // 1 means some probe failed, which the results say
	}
	return seen, err
}

// awaitGo waits for the launcher's go when the config asks for it.
func awaitGo(conn *selftest.Conn, cfg selftest.InitConfig) error {
	if !cfg.WaitGo {
		return nil
	}
	m, err := conn.Recv(context.Background())
	switch {
	case err != nil:
		return err
	case m.Type == selftest.MsgAbort:
		return fmt.Errorf("launch aborted by the launcher: %s", m.Reason)
	case m.Type != selftest.MsgGo:
		return fmt.Errorf("got %q, want %q or %q", m.Type, selftest.MsgGo, selftest.MsgAbort)
	}
	return nil
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
	b, err := bridge.Listen(bridge.Config{Port: c.Port, Socket: c.Socket, Addrs: loopbackAddrs()})
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
