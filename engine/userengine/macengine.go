package userengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/account"
	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// MacEngine runs one sandbox of the macOS engine: engine.Engine with no
// OCI runtime, no init of root's and no cgroup. Its first process is the
// starter, forked by this process as the account (mac_darwin.go's start);
// every other step runs an argv of MacRun's through Exec. The logic here
// is the same on every OS and is tested on Linux with a fake Exec; only
// the start and the pty are darwin's.
type MacEngine struct {
	Run MacRun
	// Exec runs one argv and returns what it printed (stdout and stderr)
	// and its exit code; nil is the real one (runArgv).
	Exec   func(ctx context.Context, argv []string) (out string, code int, err error)
	bundle string
}

var _ engine.Engine = (*MacEngine)(nil)

// RecordedMac is the macOS engine of a run whose bundle has a MacRun
// record (mac.json), for gc.
func RecordedMac(bundle string) (*MacEngine, bool) {
	data, err := os.ReadFile(filepath.Join(bundle, MacRecordFile))
	if err != nil {
		return nil, false
	}
	e := &MacEngine{bundle: bundle}
	if err := json.Unmarshal(data, &e.Run); err != nil || e.Run.UID <= 0 {
		return nil, false
	}
	return e, true
}

func (e *MacEngine) exec(ctx context.Context, argv []string) (string, int, error) {
	if e.Exec != nil {
		return e.Exec(ctx, argv)
	}
	return runArgv(ctx, argv)
}

// run runs argv and takes any exit but 0 for an error.
func (e *MacEngine) run(ctx context.Context, argv []string) (string, error) {
	out, code, err := e.exec(ctx, argv)
	if err == nil && code != 0 {
		err = fmt.Errorf("%s: exit status %d: %s", strings.Join(argv, " "), code, strings.TrimSpace(out))
	}
	return out, err
}

// WriteBundle writes the spec (the starter's argv and environment), the
// Seatbelt profile and the pf anchor (into the files Run names, in the run
// directory), and the record, before any of them is used.
func (e *MacEngine) WriteBundle(dir string, s *specs.Spec, _ policy.Rootfs) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	e.bundle = dir
	if err := engine.WriteConfig(dir, s); err != nil {
		return err
	}
	if err := e.writeRecord(); err != nil {
		return err
	}
	return e.Run.WriteFiles()
}

func (e *MacEngine) writeRecord() error { return writeRecord(e.bundle, MacRecordFile, e.Run) }

// LoadFence loads the anchor file and keeps pf's enable token (recorded at
// once, so that a gc releases it), then checks that the anchor holds the
// account's rules.
func (e *MacEngine) LoadFence(ctx context.Context) error {
	out, err := e.run(ctx, e.Run.PFLoadArgv())
	if err != nil {
		return fmt.Errorf("network fence: %w", err)
	}
	if e.Run.PFToken, err = ParsePFToken(out); err != nil {
		return fmt.Errorf("network fence: %w", err)
	}
	if err := e.writeRecord(); err != nil {
		return err
	}
	rules, err := e.run(ctx, e.Run.PFShowArgv())
	if err != nil {
		return fmt.Errorf("network fence: %w", err)
	}
	if !HasUserRules(rules, e.Run.UID) {
		return fmt.Errorf("network fence: pfctl -s rules of anchor %s shows no rule of uid %d after the load", account.PFAnchor, e.Run.UID)
	}
	return nil
}

// Grant grants the workspace to the account for the run, recorded first,
// so that a teardown after a crash in between revokes it.
func (e *MacEngine) Grant(ctx context.Context) error {
	e.Run.Granted = true
	if err := e.writeRecord(); err != nil {
		return err
	}
	_, err := e.run(ctx, e.Run.GrantArgv())
	return err
}

// Start has nothing to do: the starter runs from Create on and waits for
// the launcher's go on its channel.
func (e *MacEngine) Start(context.Context, string) error { return nil }

// Kill signals the starter (the agent once it executed it), or every
// process of the account.
func (e *MacEngine) Kill(ctx context.Context, _ string, sig syscall.Signal, all bool) error {
	if all {
		_, _, err := e.exec(ctx, []string{macPkill, "-" + strconv.Itoa(int(sig)), "-U", strconv.Itoa(e.Run.UID)})
		return err
	}
	if e.Run.Pid <= 0 {
		return engine.ErrNotFound
	}
	return syscall.Kill(e.Run.Pid, sig)
}

// Delete kills every process of the account with force.
func (e *MacEngine) Delete(ctx context.Context, id string, force bool) error {
	if force {
		return e.Kill(ctx, id, syscall.SIGKILL, true)
	}
	return nil
}

// State reports the run as running while the account has a process.
func (e *MacEngine) State(ctx context.Context, id string) (engine.State, error) {
	pids, err := e.alive(ctx)
	if err != nil {
		return engine.State{}, err
	}
	if len(pids) == 0 {
		return engine.State{}, engine.ErrNotFound
	}
	return engine.State{ID: id, Pid: e.Run.Pid, Status: "running", Bundle: e.bundle}, nil
}

// GrantMethod is the extended ACL chmod +a adds (Grant), not engine.Grant.
func (e *MacEngine) GrantMethod(context.Context) (method, reason string) {
	return "macos-acl", "the agent runs as the macOS account " + e.Run.Account + ", granted the workspace with an extended ACL (chmod +a) for the run"
}

// ProcRoot is empty: macOS has no procfs. The launcher verifies the
// starter from the host through the kernel's process table instead.
func (e *MacEngine) ProcRoot() string { return "" }

// Teardown kills every process of the account until none is left (3 s at
// most), flushes the anchor and checks it is empty, releases pf's token,
// revokes the grant and gives the agent's files back, removes the run's
// home, runs the launcher's cleanups and, once they succeeded, removes
// the run directory; the record says what survived.
func (e *MacEngine) Teardown(ctx context.Context, t engine.Target, cleanups ...func() error) ledger.Teardown {
	var rec ledger.Teardown
	note := func(err error) {
		if err != nil {
			rec.Errors = append(rec.Errors, err.Error())
		}
	}
	r := &e.Run
	pids, err := e.killAll(ctx, t.InitPid)
	note(err)
	rec.SurvivingPIDs = pids
	if _, err := e.run(ctx, r.PFFlushArgv()); err != nil {
		note(err)
	}
	if rules, err := e.run(ctx, r.PFShowArgv()); err != nil || HasUserRules(rules, r.UID) {
		note(err)
		rec.RuntimeStateLeft = append(rec.RuntimeStateLeft, "pf anchor "+account.PFAnchor+" rules of uid "+strconv.Itoa(r.UID))
	}
	if r.PFToken != "" {
		_, err := e.run(ctx, r.PFReleaseArgv())
		note(err)
	}
	if r.Granted && r.Workspace != "" {
		if _, err := e.run(ctx, r.RevokeArgv()); err != nil {
			note(err)
			rec.RuntimeStateLeft = append(rec.RuntimeStateLeft, "ACL entry "+r.ACE()+" in "+r.Workspace)
		}
		if len(rec.SurvivingPIDs) == 0 { // with none of the account's processes left, nothing moves under it
			_, err := e.run(ctx, r.GiveBackArgv())
			note(err)
		}
	}
	note(removeHome(r.Home))
	failed := false
	for _, c := range cleanups {
		if err := c(); err != nil {
			note(err)
			failed = true
		}
	}
	rec.Decision = ledger.DecisionClean
	if failed {
		rec.Errors = append(rec.Errors, "run directory "+t.RunDir+" kept for a later 'agentbox gc'")
	} else if t.RunDir != "" {
		note(engine.RemoveTree(t.RunDir))
	}
	if failed || len(rec.Errors)+len(rec.SurvivingPIDs)+len(rec.RuntimeStateLeft) > 0 {
		rec.Decision = ledger.DecisionResidue
	}
	return rec
}

// killAll kills the account's processes until pgrep finds none, reaping
// the starter when it is this process's child, and returns the survivors.
func (e *MacEngine) killAll(ctx context.Context, starter int) ([]int, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, _, _ = e.exec(ctx, e.Run.KillArgv()) // pkill exits 1 when nothing matched
		if starter > 0 {
			reap(starter)
		}
		left, err := e.alive(ctx)
		if err != nil || len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			slices.Sort(left)
			return left, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive lists the account's processes: pgrep's exit 1 is "none".
func (e *MacEngine) alive(ctx context.Context) ([]int, error) {
	argv := e.Run.AliveArgv()
	out, code, err := e.exec(ctx, argv)
	switch {
	case err != nil:
		return nil, err
	case code == 1:
		return nil, nil
	case code != 0:
		return nil, fmt.Errorf("%s: exit status %d: %s", strings.Join(argv, " "), code, strings.TrimSpace(out))
	}
	return ParsePids(out)
}

// reap collects pid's exit status if it is a child of this process that
// has exited; it never blocks.
func reap(pid int) {
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
}

// errNoStarter is Create's error for a spec that names no starter.
var errNoStarter = errors.New("the bundle's config.json names no process to start")

// readSpec reads the bundle's spec, which must name a process to start.
func readSpec(bundle string) (*specs.Spec, error) {
	var s specs.Spec
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if err != nil {
		return nil, fmt.Errorf("read the bundle's config.json: %w", err)
	}
	if s.Process == nil || len(s.Process.Args) == 0 {
		return nil, errNoStarter
	}
	return &s, nil
}

// writeRecord writes an engine's record of the run (what teardown and gc
// take down) into the bundle, atomically: it is rewritten as the run goes
// on, and a crash must leave the last whole one.
func writeRecord(bundle, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		return err
	}
	return engine.WriteFileAtomic(filepath.Join(bundle, name), data, 0o600)
}

// Create loads the fence and starts the spec's process, the starter, as
// the account: forked here with the account's groups, gid and uid set
// before the exec, the spec's environment and no other, in the spec's
// directory, with the streams and extra files of o (fd 3 is the init
// protocol's socket). With o.ConsoleSocket it runs on a fresh pty of its
// own, as its session's controlling terminal, and the master goes to the
// launcher on the console socket.
func (e *MacEngine) Create(ctx context.Context, _ string, bundle string, o engine.CreateOptions) (int, error) {
	s, err := readSpec(bundle)
	if err != nil {
		return 0, err
	}
	e.bundle = bundle
	if err := e.LoadFence(ctx); err != nil {
		return 0, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	files := []*os.File{orNull(o.Stdio.In, null), orNull(o.Stdio.Out, null), orNull(o.Stdio.Err, null)}
	sys := &syscall.SysProcAttr{Credential: e.credential()}
	var master *os.File
	if o.ConsoleSocket != "" {
		m, slave, err := openPty()
		if err != nil {
			return 0, err
		}
		defer slave.Close()
		defer m.Close() // the launcher receives its own copy
		// The account's own terminal, as a login gives one: root may.
		if err := slave.Chown(e.Run.UID, e.Run.GID); err != nil {
			return 0, fmt.Errorf("give the pty to %s: %w", e.Run.Account, err)
		}
		master, files = m, []*os.File{slave, slave, slave}
		sys.Setsid, sys.Setctty, sys.Ctty = true, true, 0
	}
	files = append(files, o.ExtraFiles...)
	p := s.Process
	proc, err := os.StartProcess(p.Args[0], p.Args, &os.ProcAttr{Dir: p.Cwd, Env: p.Env, Files: files, Sys: sys})
	if err != nil {
		return 0, fmt.Errorf("start %s as %s: %w", p.Args[0], e.Run.Account, err)
	}
	e.Run.Pid = proc.Pid
	_ = proc.Release() // the launcher waits for it (engine.Wait)
	if master != nil {
		if err := sendConsole(o.ConsoleSocket, master); err != nil {
			_ = syscall.Kill(e.Run.Pid, syscall.SIGKILL)
			return e.Run.Pid, err
		}
	}
	return e.Run.Pid, e.writeRecord()
}

// credential is the account's: its uid, gid and every group id -G lists.
func (e *MacEngine) credential() *syscall.Credential {
	c := &syscall.Credential{Uid: uint32(e.Run.UID), Gid: uint32(e.Run.GID)}
	for _, g := range e.Run.Groups {
		c.Groups = append(c.Groups, uint32(g))
	}
	return c
}

// runArgv runs argv (an absolute path first) and returns its output, both
// streams, and its exit code; err is for a command that did not run.
func runArgv(ctx context.Context, argv []string) (string, int, error) {
	cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *osexec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode(), nil
	}
	if err != nil {
		return out.String(), -1, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return out.String(), 0, nil
}
