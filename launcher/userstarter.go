package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine/userengine"
	"github.com/agentbox/agentbox/selftest"
)

// The starter is the macOS engine's first process (userengine.MacEngine):
// the agentbox binary, started by the launcher as the dedicated account
// under the Seatbelt profile, with the agent's environment, in the
// workspace. It speaks agentbox-init's protocol on fd 3, so the launcher
// drives it as it drives init (configureInit, verify, handOver): it takes
// the configuration, runs the probes in a child of its own (this binary,
// StarterCommand --probe) and relays their results exactly as init relays
// its probe child's (selftest.ReadResults, NoResult), reports its own pid
// as the agent-to-be, waits for the go, and executes the agent in its own
// place, so that the agent is the launcher's child (its exit status,
// signals and streams the launcher's). Before that it leaves a watchdog
// behind (StarterCommand --watch), the account's too, which holds the
// protocol's socket for the rest of the run: when the launcher closes it
// (teardown) or dies, the watchdog kills every process of the account, as
// agentbox-init ends the sandbox on Linux. Nothing of root's runs in it: the
// gateway's loopback relay is the launcher's (user_darwin.go). It builds
// on every OS and is tested on Linux; only the Mac runs it for real.

// StarterCommand is the hidden first argument that makes agentbox the
// starter (cmd/agentbox's dispatch).
const StarterCommand = userengine.StarterArg

// starterSys is what the starter does to the system, replaced in tests.
type starterSys struct {
	// probe starts the probe child with cfg on its stdin; out is its
	// stdout, wait waits for it.
	probe func(cfg selftest.InitConfig) (out io.ReadCloser, wait func() error, err error)
	// watch starts the watchdog on the protocol's socket.
	watch func() error
	// exec replaces the process with the agent.
	exec func(path string, args, env []string, dir string) error
	pid  int
}

// StarterMain is `agentbox __agentbox-starter` (the protocol on fd 3),
// `agentbox __agentbox-starter --probe` (the probe child: the config on
// stdin, JSON results on stdout; exit 0 when all passed, 1 when one did
// not, 2 on bad input) and `agentbox __agentbox-starter --watch` (the
// watchdog: the socket on fd 3).
func StarterMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 1 && args[0] == "--probe" {
		return starterProbe(stdin, stdout, stderr)
	}
	if len(args) == 1 && args[0] == "--watch" {
		f := os.NewFile(uintptr(selftest.InitFD), "agentbox-watch")
		watchChannel(f, killAccount)
		return 0
	}
	if len(args) != 0 {
		fmt.Fprintln(stderr, "agentbox: the starter takes no arguments; the launcher starts it")
		return 2
	}
	if _, err := unix.FcntlInt(uintptr(selftest.InitFD), unix.F_GETFD, 0); err != nil {
		fmt.Fprintf(stderr, "agentbox: starter: fd %d: %v (only agentbox run --isolation user starts the starter)\n", selftest.InitFD, err)
		return selftest.ExitInitFailed
	}
	unix.CloseOnExec(selftest.InitFD) // neither the probe child nor the agent gets it
	f := os.NewFile(uintptr(selftest.InitFD), "agentbox-starter")
	defer f.Close() // the watchdog gets it first
	conn, err := selftest.NewConn(f)
	if err != nil {
		fmt.Fprintf(stderr, "agentbox: starter: %v\n", err)
		return selftest.ExitInitFailed
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "agentbox: starter: %v\n", err)
		return selftest.ExitInitFailed
	}
	return runStarter(conn, stderr, starterSys{
		probe: func(cfg selftest.InitConfig) (io.ReadCloser, func() error, error) { return startProbeChild(self, cfg) },
		watch: func() error { return startWatchdog(self, f) },
		exec:  execAgent,
		pid:   os.Getpid(),
	})
}

// runStarter is the protocol: each failure is sent to the launcher as
// init's error message would be and ends the starter with init's code.
func runStarter(conn *selftest.Conn, stderr io.Writer, sys starterSys) int {
	fail := func(code int, step string, err error) int {
		reason := fmt.Sprintf("starter: %s: %v", step, err)
		_ = conn.Send(selftest.Message{Type: selftest.MsgError, Reason: reason})
		fmt.Fprintln(stderr, "agentbox:", reason)
		return code
	}
	m, err := conn.Recv(context.Background())
	if err == nil && (m.Type != selftest.MsgConfig || m.Config == nil) {
		err = fmt.Errorf("first message is %q, want %q", m.Type, selftest.MsgConfig)
	}
	if err == nil {
		err = m.Config.Validate()
	}
	if err != nil {
		return fail(selftest.ExitInitFailed, "config", err)
	}
	cfg := *m.Config
	if err := relayProbes(conn, cfg, sys); err != nil {
		return fail(selftest.ExitInitFailed, "probes", err)
	}
	if err := conn.Send(selftest.Message{Type: selftest.MsgProbesDone, PID: sys.pid}); err != nil {
		return fail(selftest.ExitInitFailed, "probes", err)
	}
	if cfg.WaitGo {
		switch m, err := conn.Recv(context.Background()); {
		case err != nil:
			return fail(selftest.ExitInitFailed, "go", err)
		case m.Type == selftest.MsgAbort:
			return fail(selftest.ExitInitFailed, "go", fmt.Errorf("launch aborted by the launcher: %s", m.Reason))
		case m.Type != selftest.MsgGo:
			return fail(selftest.ExitInitFailed, "go", fmt.Errorf("got %q, want %q or %q", m.Type, selftest.MsgGo, selftest.MsgAbort))
		}
	}
	a := cfg.Agent
	if len(a.Args) == 0 {
		return 0 // a probe-only run (agentbox selftest): nothing to start
	}
	path, err := lookPathIn(a.Args[0], envValue(a.Env, "PATH"))
	if err != nil {
		code := selftest.ExitNotFound
		if !errors.Is(err, os.ErrNotExist) {
			code = selftest.ExitCannotExec
		}
		return fail(code, "start agent", err)
	}
	// No Landlock on macOS: the zero status says so; Seatbelt is the
	// layer (the plan's profile, applied before this process started).
	if err := sys.watch(); err != nil {
		return fail(selftest.ExitInitFailed, "watchdog", err)
	}
	if err := conn.Send(selftest.Message{Type: selftest.MsgStarted, PID: sys.pid, Landlock: &selftest.LandlockStatus{}}); err != nil {
		return fail(selftest.ExitInitFailed, "report start", err)
	}
	_ = conn.Close()
	err = sys.exec(path, a.Args, a.Env, a.Dir)
	fmt.Fprintf(stderr, "agentbox: starter: execute %s: %v\n", path, err)
	return selftest.ExitCannotExec
}

// relayProbes runs the probe child and relays its results; every
// selected probe it did not report on is UNKNOWN, with why.
func relayProbes(conn *selftest.Conn, cfg selftest.InitConfig, sys starterSys) error {
	probes, err := selftest.Selected(&cfg)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	out, wait, err := sys.probe(cfg)
	if err == nil {
		err = selftest.ReadResults(out, seen, func(r selftest.Result) error {
			return conn.Send(selftest.Message{Type: selftest.MsgResult, Result: &r})
		})
		out.Close()
		if werr := wait(); err == nil && werr != nil {
			var exit *exec.ExitError
			if !errors.As(werr, &exit) || exit.ExitCode() > 1 { // 1: some probe failed, which the results say
				err = fmt.Errorf("the probe process ended with %w", werr)
			}
		}
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

// startProbeChild starts self --probe as the starter's child: same uid,
// same Seatbelt profile (inherited), the agent's environment and
// directory, so the probes stand where the agent will.
func startProbeChild(self string, cfg selftest.InitConfig) (io.ReadCloser, func() error, error) {
	in, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, StarterCommand, "--probe")
	cmd.Stdin = strings.NewReader(string(in))
	cmd.Env, cmd.Dir, cmd.Stderr = cfg.Agent.Env, cfg.Agent.Dir, os.Stderr
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return out, cmd.Wait, nil
}

// startWatchdog starts self --watch with the protocol's socket as its fd
// 3, in a process group of its own (a signal the terminal sends the
// agent's group does not end it), and does not wait for it.
func startWatchdog(self string, sock *os.File) error {
	cmd := exec.Command(self, StarterCommand, "--watch")
	cmd.ExtraFiles = []*os.File{sock}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// watchChannel reads r, the protocol's socket, until the launcher's end
// closes or fails, then kills.
func watchChannel(r io.Reader, kill func()) {
	_, _ = io.Copy(io.Discard, r)
	kill()
}

// killAccount sends SIGKILL to every process of this uid but the caller
// (kill(2) with pid -1, as the account: only its own processes).
func killAccount() { _ = syscall.Kill(-1, syscall.SIGKILL) }

// starterProbe is the probe child: the config on stdin, one JSON result a
// line on stdout.
func starterProbe(stdin io.Reader, stdout, stderr io.Writer) int {
	cfg := selftest.InitConfig{Version: selftest.ProtocolVersion}
	dec := json.NewDecoder(stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "agentbox: probe: config on stdin: %v\n", err)
		return 2
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "agentbox: probe: config: %v\n", err)
		return 2
	}
	passed, err := selftest.WriteResults(context.Background(), stdout, selftest.NewEnv(&cfg))
	if err != nil {
		fmt.Fprintf(stderr, "agentbox: probe: %v\n", err)
		return 1
	}
	if !passed {
		return 1
	}
	return 0
}

// execAgent changes to dir and replaces this process with the agent.
func execAgent(path string, args, env []string, dir string) error {
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			return err
		}
	}
	return syscall.Exec(path, args, env)
}

// envValue is the value of name in env, "" when unset.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// lookPathIn finds name as execvp would with PATH path (the agent's, not
// the starter's): a name with a slash is taken as it is. A name found
// nowhere is fs.ErrNotExist.
func lookPathIn(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH %q: %w", name, path, os.ErrNotExist)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", p)
	case fi.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return unix.Access(p, unix.X_OK)
}
