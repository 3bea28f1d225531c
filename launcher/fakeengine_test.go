package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// fakeInitEnv makes the test binary the fake engine's sandbox init; its
// value is the fakeInit to play, as JSON.
const fakeInitEnv = "AGENTBOX_LAUNCHER_TEST_FAKE_INIT"

// fakeInit is what the fake sandbox's init does: it reads its
// configuration on fd 3 as agentbox-init does, reports Probes, waits for
// the launcher's go, reports the agent started (when there is one), writes
// Stdout and exits with Exit, or with Hang stays until it is killed.
type fakeInit struct {
	Probes []selftest.Result
	Stdout string
	Exit   int
	Hang   bool
}

// agentNSPid is the agent's pid inside the fake sandbox, as init reports it.
const agentNSPid = 2

// fakeInitMain is the fake init, run by TestMain in a process of its own.
func fakeInitMain(spec string) int {
	var fi fakeInit
	if err := json.Unmarshal([]byte(spec), &fi); err != nil {
		return selftest.ExitInitFailed
	}
	conn, err := selftest.NewConn(os.NewFile(selftest.InitFD, "init"))
	if err != nil {
		return selftest.ExitInitFailed
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := conn.Recv(ctx)
	if err != nil || m.Type != selftest.MsgConfig {
		return selftest.ExitInitFailed
	}
	cfg := m.Config
	// The agent's starter is ready before the first result, as a real
	// init's usually is: the launcher verifies it beside the probes.
	if conn.Send(selftest.Message{Type: selftest.MsgAgentReady, PID: agentNSPid}) != nil {
		return selftest.ExitInitFailed
	}
	for _, r := range fi.Probes {
		if conn.Send(selftest.Message{Type: selftest.MsgResult, Result: &r}) != nil {
			return selftest.ExitInitFailed
		}
	}
	if conn.Send(selftest.Message{Type: selftest.MsgProbesDone, PID: agentNSPid}) != nil {
		return selftest.ExitInitFailed
	}
	if m, err = conn.Recv(ctx); err != nil || m.Type != selftest.MsgGo {
		return selftest.ExitInitFailed // aborted, or the launcher went away
	}
	if len(cfg.Agent.Args) == 0 {
		return 0 // a self-test: no agent
	}
	if conn.Send(selftest.Message{Type: selftest.MsgStarted, PID: agentNSPid, Landlock: &selftest.LandlockStatus{ABI: 4}}) != nil {
		return selftest.ExitInitFailed
	}
	fmt.Fprint(os.Stdout, fi.Stdout)
	if fi.Hang {
		time.Sleep(time.Hour)
	}
	return fi.Exit
}

// fakeEngine is an engine.Engine for the launcher's unit tests: its
// sandbox's init is this test binary (fakeInitMain), a child of the test
// process and in none of a sandbox's namespaces, so the host sees it
// through a proc tree the fake writes (ProcRoot) that shows what a
// hardened sandbox shows. It records every call and fails the ones named
// in fail.
type fakeEngine struct {
	t    *testing.T
	proc string
	init fakeInit
	fail map[string]error

	mu       sync.Mutex
	calls    []string
	bundles  [][]byte // each config.json written, as written
	children map[int]*exec.Cmd
	targets  []engine.Target
}

func newFakeEngine(t *testing.T, init fakeInit) *fakeEngine {
	t.Helper()
	f := &fakeEngine{t: t, proc: t.TempDir(), init: init, fail: map[string]error{}, children: map[int]*exec.Cmd{}}
	f.writeHost()
	t.Cleanup(f.killAll)
	return f
}

// open is the fake's engine.Opener: every run is the fake's.
func (f *fakeEngine) open(engine.Runtime) engine.Engine { return f }

func (f *fakeEngine) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	return f.fail[name]
}

func (f *fakeEngine) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeEngine) WriteBundle(dir string, s *specs.Spec, _ policy.Rootfs) error {
	if err := f.call("write bundle"); err != nil {
		return err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	f.mu.Lock()
	f.bundles = append(f.bundles, data)
	f.mu.Unlock()
	return os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644)
}

func (f *fakeEngine) Create(_ context.Context, _, _ string, o engine.CreateOptions) (int, error) {
	if err := f.call("create"); err != nil {
		return 0, err
	}
	spec, err := json.Marshal(f.init)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{fakeInitEnv + "=" + string(spec)}
	if o.Stdio.In != nil {
		cmd.Stdin = o.Stdio.In
	}
	if o.Stdio.Out != nil {
		cmd.Stdout = o.Stdio.Out
	}
	if o.Stdio.Err != nil {
		cmd.Stderr = o.Stdio.Err
	}
	cmd.ExtraFiles = o.ExtraFiles
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.children[cmd.Process.Pid] = cmd
	f.mu.Unlock()
	f.writeSandbox(cmd.Process.Pid)
	return cmd.Process.Pid, nil
}

func (f *fakeEngine) Start(context.Context, string) error { return f.call("start") }

func (f *fakeEngine) Kill(context.Context, string, syscall.Signal, bool) error {
	return f.call("kill")
}

func (f *fakeEngine) Delete(context.Context, string, bool) error { return f.call("delete") }

func (f *fakeEngine) State(_ context.Context, id string) (engine.State, error) {
	return engine.State{ID: id}, f.call("state")
}

// Teardown kills the fake's own children only, runs the cleanups and
// removes the run directory, as the runtime's teardown does.
func (f *fakeEngine) Teardown(_ context.Context, t engine.Target, cleanups ...func() error) ledger.Teardown {
	_ = f.call("teardown")
	f.mu.Lock()
	f.targets = append(f.targets, t)
	f.mu.Unlock()
	f.killAll()
	rec := ledger.Teardown{Decision: ledger.DecisionClean}
	for _, c := range cleanups {
		if err := c(); err != nil {
			rec.Decision, rec.Errors = ledger.DecisionResidue, append(rec.Errors, err.Error())
		}
	}
	if rec.Decision == ledger.DecisionClean {
		if err := os.RemoveAll(t.RunDir); err != nil {
			rec.Decision, rec.Errors = ledger.DecisionResidue, append(rec.Errors, err.Error())
		}
	}
	return rec
}

func (f *fakeEngine) GrantMethod(context.Context) (string, string) {
	return engine.GrantACL, "the fake engine grants with ACLs"
}

func (f *fakeEngine) ProcRoot() string { return f.proc }

// killAll ends and reaps every child still running (one the session's
// Wait reaped already is gone).
func (f *fakeEngine) killAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for pid, cmd := range f.children {
		_ = cmd.Process.Kill()
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		delete(f.children, pid)
	}
}

// The fake proc tree: the host's own namespaces and mounts (self), and
// for each sandbox its init and the agent-to-be, which show what the host
// sees of a hardened sandbox: a user namespace map without host root, no
// capabilities, no_new_privs, a seccomp filter, namespaces of their own,
// an own root, and init's uids apart from the agent's.
var nsKinds = []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"}

func (f *fakeEngine) writeHost() {
	f.writeNS("self", 4026531000)
	f.write("self/mountinfo", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n")
}

func (f *fakeEngine) writeSandbox(init int) {
	agent := init + 1_000_000 // a pid of the fake tree only
	f.writeNS(strconv.Itoa(init), 4026532000)
	f.writeNS(strconv.Itoa(agent), 4026532000)
	f.write(strconv.Itoa(init)+"/status", status(1, init, 1, 0))
	f.write(strconv.Itoa(agent)+"/status", status(init, agent, agentNSPid, 101000))
	f.write(strconv.Itoa(agent)+"/uid_map", "         0     100000      65536\n")
	f.write(strconv.Itoa(agent)+"/mountinfo", "500 400 0:99 / / ro,relatime - tmpfs tmpfs ro\n")
}

// status is a /proc/PID/status of a sandbox process: pid on the host and
// nsPid inside, with uid and nothing else a hardened sandbox withholds.
func status(ppid, pid, nsPid int, uid uint32) string {
	u := strconv.FormatUint(uint64(uid), 10)
	return strings.Join([]string{
		"Name:\tfake", "PPid:\t" + strconv.Itoa(ppid), "NSpid:\t" + strconv.Itoa(pid) + "\t" + strconv.Itoa(nsPid),
		"Uid:\t" + u + "\t" + u + "\t" + u + "\t" + u,
		"CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000",
		"NoNewPrivs:\t1", "Seccomp:\t2", "",
	}, "\n")
}

func (f *fakeEngine) writeNS(pid string, base uint64) {
	if err := os.MkdirAll(filepath.Join(f.proc, pid, "ns"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	for i, k := range nsKinds {
		if err := os.Symlink(fmt.Sprintf("%s:[%d]", k, base+uint64(i)), filepath.Join(f.proc, pid, "ns", k)); err != nil && !errors.Is(err, os.ErrExist) {
			f.t.Fatal(err)
		}
	}
}

func (f *fakeEngine) write(name, content string) {
	if err := os.WriteFile(filepath.Join(f.proc, name), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

var _ engine.Engine = (*fakeEngine)(nil)
