//go:build integration && linux

package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// foregroundRuntime is runc or crun as root, with its own state directory,
// and a bundle of a plain sandbox (the host's /usr, read-only) that runs
// script; it skips when the runtime is not installed.
func foregroundRuntime(t *testing.T, name, script string) (Runtime, string, string) {
	t.Helper()
	testutil.RequireRoot(t)
	path, err := exec.LookPath(name)
	if err != nil {
		testutil.Skip(t, name+" is not installed")
	}
	r := Runtime{Name: name, Path: path, Root: t.TempDir(), Hide: HiddenUnified(path, true)}
	if !r.Foreground(CreateOptions{}) {
		t.Fatalf("%s as root does not run in the foreground", name)
	}
	id := "fg-" + name + "-" + strings.ReplaceAll(t.Name(), "/", "-")
	id = strings.Map(func(c rune) rune {
		if c == '_' {
			return '-'
		}
		return c
	}, id)
	leftBelowUnified(t, "agentbox-enginetest/"+id, true) // an earlier build's
	run := t.TempDir()
	bundle := filepath.Join(run, "bundle")
	s := &specs.Spec{
		Version: "1.0.2",
		Root:    &specs.Root{Path: "rootfs", Readonly: true},
		Process: &specs.Process{Args: []string{"/bin/sh", "-c", script}, Cwd: "/", Env: []string{"PATH=/usr/bin:/bin"}},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "mode=755"}},
			{Destination: "/usr", Type: "bind", Source: "/usr", Options: []string{"rbind", "ro"}},
		},
		Linux: &specs.Linux{
			CgroupsPath: "/agentbox-enginetest/" + id,
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace},
				{Type: specs.MountNamespace},
				{Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace},
				{Type: specs.NetworkNamespace},
			},
		},
	}
	rootfs := policy.Rootfs{Symlinks: map[string]string{"/bin": "usr/bin", "/lib": "usr/lib", "/lib64": "usr/lib64"}}
	if err := os.Mkdir(bundle, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteBundle(bundle, s, rootfs); err != nil {
		t.Fatal(err)
	}
	return r, id, run
}

// runForeground starts script's sandbox in a Session, which takes the
// foreground path, and returns the session and its stdout file.
func runForeground(t *testing.T, r Runtime, id, run string) (*Session, *os.File) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	s := &Session{Engine: r, ID: id, Bundle: filepath.Join(run, "bundle"), Held: true, Out: out}
	if _, err := s.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pid, _ := s.Runtime(); pid == 0 {
		t.Fatal("the session did not run the sandbox with a foreground runtime")
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, out
}

// recordingRuntime is r through a script that appends each call's
// arguments to calls before it runs r.
func recordingRuntime(t *testing.T, r Runtime) (recorder Runtime, calls string) {
	t.Helper()
	calls = filepath.Join(t.TempDir(), "calls")
	path := filepath.Join(t.TempDir(), r.Name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho \"$@\" >>"+calls+"\nexec "+r.Path+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Runtime{Name: r.Name, Path: path, Root: r.Root}, calls
}

// teardownCallsNoRuntime tears the run down with a runtime binary that
// records each call, and checks that it is clean and made none.
func teardownCallsNoRuntime(t *testing.T, r Runtime, id, run string, s *Session) {
	t.Helper()
	recorder, calls := recordingRuntime(t, r)
	rpid, rstart := s.Runtime()
	ns, _ := NamespaceInode(s.Pid(), "pid") // gone already: the walk then trusts init's absence
	rec := recorder.Teardown(context.Background(), Target{
		ID: id, RunDir: run, PidNS: ns, InitPid: s.Pid(), Cgroup: "/agentbox-enginetest/" + id,
		RuntimePid: rpid, RuntimeStart: rstart,
	})
	if rec.Decision != ledger.DecisionClean {
		t.Errorf("teardown %+v, want clean", rec)
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("teardown called %s after its foreground run deleted the container: %q", r.Name, b)
	}
	if dirs, _ := filepath.Glob("/sys/fs/cgroup/*/agentbox-enginetest/" + id); len(dirs) > 0 {
		t.Errorf("cgroups remain: %v", dirs)
	}
	if left := leftBelowUnified(t, "agentbox-enginetest/"+id, false); left != "" {
		t.Errorf("the run left %s on the host's cgroup tmpfs, below its cgroup2 mount", left)
	}
}

// leftBelowUnified returns the path of rel below the host's cgroup2
// mount (BelowHybridUnified) when it exists there ("" otherwise, and on a
// host that is not hybrid): what a runtime made there stays on the host,
// unseen. With clear, it removes it instead (what an earlier build left).
func leftBelowUnified(t *testing.T, rel string, clear bool) string {
	t.Helper()
	if !HybridCgroup() {
		return ""
	}
	found := ""
	err := BelowHybridUnified(func(dir string) error {
		p := filepath.Join(dir, rel)
		if _, err := os.Lstat(p); err != nil {
			return nil
		}
		if clear {
			return os.RemoveAll(p)
		}
		found = p
		return nil
	})
	if err != nil {
		t.Errorf("below %s: %v", HybridUnified, err)
	}
	return found
}

// A foreground runtime passes the sandbox's output and exit status on,
// removes the container's state itself, and is collected: teardown then
// calls no runtime and is clean.
func TestForegroundRunDeletesItsContainerAsRoot(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) {
			r, id, run := foregroundRuntime(t, name, "echo hello; exit 7")
			s, out := runForeground(t, r, id, run)
			code, err := s.Wait(context.Background(), nil, false)
			if err != nil || code != 7 {
				t.Fatalf("Wait = %d, %v; want 7", code, err)
			}
			if b, _ := os.ReadFile(out.Name()); string(b) != "hello\n" {
				t.Errorf("sandbox output %q, want hello", b)
			}
			if _, err := os.Lstat(filepath.Join(r.Root, id)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the runtime's state of %s is still there: %v", id, err)
			}
			if rpid, rstart := s.Runtime(); !runtimeGone(rpid, rstart) {
				t.Errorf("the runtime's process %d was not collected", rpid)
			}
			teardownCallsNoRuntime(t, r, id, run, s)
		})
	}
}

// A signal for the sandbox reaches its first process from the launcher
// (the runtime, in a process group of its own, forwards nothing), and the
// first process's own exit status comes back; a report of that process
// that disagrees with the runtime's status is an error.
func TestForegroundRunSignalsAndExitReportAsRoot(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) {
			r, id, run := foregroundRuntime(t, name, "trap 'exit 9' INT; echo ready; sleep 100 & wait")
			s, out := runForeground(t, r, id, run)
			s.ExitReport = func(context.Context) (int, error) { return 3, nil }
			rpid, _ := s.Runtime()
			if pgid, err := syscall.Getpgid(rpid); err != nil || pgid != rpid {
				t.Errorf("the runtime's process group is %d (%v), want its own %d", pgid, err, rpid)
			}
			for {
				if b, _ := os.ReadFile(out.Name()); string(b) == "ready\n" {
					break
				}
				time.Sleep(time.Millisecond)
			}
			sigs := make(chan os.Signal, 1)
			sigs <- syscall.SIGINT // interactive: forwarded, since no terminal reaches the sandbox
			code, err := s.Wait(context.Background(), sigs, false)
			if code != 9 || err == nil || !strings.Contains(err.Error(), "reported exit status 3") {
				t.Errorf("Wait = %d, %v; want 9 and the disagreement with the report", code, err)
			}
			teardownCallsNoRuntime(t, r, id, run, s)
		})
	}
}

// Writes to stdout and stderr that go to one file keep their order: crun
// hands the sandbox its stdio and runs in the foreground; runc, which
// would copy each through a pipe of its own, runs detached then.
func TestForegroundKeepsTheOrderOfOneFileForBothStreamsAsRoot(t *testing.T) {
	if err := BecomeSubreaper(); err != nil { // a detached runc's sandbox is reparented here
		t.Fatal(err)
	}
	for _, name := range []string{"runc", "crun"} {
		t.Run(name, func(t *testing.T) {
			r, id, run := foregroundRuntime(t, name, "for i in 1 2 3 4 5 6 7 8; do printf o$i; printf e$i >&2; done")
			out, err := os.CreateTemp(t.TempDir(), "out")
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			s := &Session{Engine: r, ID: id, Bundle: filepath.Join(run, "bundle"), Held: true, Out: out, Err: out}
			if _, err := s.Create(context.Background()); err != nil {
				t.Fatal(err)
			}
			if pid, _ := s.Runtime(); (pid != 0) != (name == "crun") {
				t.Errorf("foreground runtime %d: want one for crun only", pid)
			}
			if code, err := s.Wait(context.Background(), nil, false); code != 0 || err != nil {
				t.Fatalf("Wait = %d, %v", code, err)
			}
			if b, _ := os.ReadFile(out.Name()); string(b) != "o1e1o2e2o3e3o4e4o5e5o6e6o7e7o8e8" {
				t.Errorf("output %q, want stdout and stderr in the order written", b)
			}
			if pid, _ := s.Runtime(); pid == 0 {
				_ = r.Delete(context.Background(), id, true)
			}
		})
	}
}

// WaitExit returns the first process's report once that process has
// exited, and the session is Pending until Settle: a teardown given the
// runtime's RuntimeDone waits for it beside its cleanups, is clean and
// calls no runtime, and Settle then checks the report against the
// runtime's status (an error when they disagree) and writes out the
// sandbox's output.
func TestForegroundWaitExitThenSettleAsRoot(t *testing.T) {
	for _, name := range []string{"runc", "crun"} {
		for _, report := range []int{7, 3} {
			t.Run(fmt.Sprintf("%s/report-%d", name, report), func(t *testing.T) {
				r, id, run := foregroundRuntime(t, name, "trap 'echo hello; exit 7' USR1; echo ready; sleep 100 & while :; do sleep 0.01; done")
				s, out := runForeground(t, r, id, run)
				ns, err := NamespaceInode(s.Pid(), "pid")
				if err != nil {
					t.Fatal(err)
				}
				s.ExitReport = func(context.Context) (int, error) { return report, nil }
				for {
					if b, _ := os.ReadFile(out.Name()); string(b) == "ready\n" {
						break
					}
					time.Sleep(time.Millisecond)
				}
				sigs := make(chan os.Signal, 1)
				sigs <- syscall.SIGUSR1
				code, err := s.WaitExit(context.Background(), sigs, false)
				if code != report || err != nil {
					t.Fatalf("WaitExit = %d, %v; want the report, %d", code, err, report)
				}
				if !s.Pending() {
					t.Fatal("WaitExit returned on the report, but the session is not pending")
				}
				if pids := PidsInNamespace(ns); len(pids) > 0 {
					t.Errorf("WaitExit returned while the sandbox still had processes %v", pids)
				}
				cleaned := false
				teardownBeside(t, r, id, run, ns, s, func() error { cleaned = true; return nil })
				if !cleaned {
					t.Error("the cleanup did not run")
				}
				code, err = s.Settle()
				switch {
				case report == 7 && (code != 7 || err != nil):
					t.Errorf("Settle = %d, %v; want 7", code, err)
				case report != 7 && (code != 7 || err == nil || !strings.Contains(err.Error(), "reported exit status 3")):
					t.Errorf("Settle = %d, %v; want 7 and the disagreement with the report", code, err)
				}
				if s.Pending() {
					t.Error("the session is still pending after Settle")
				}
				if b, _ := os.ReadFile(out.Name()); string(b) != "ready\nhello\n" {
					t.Errorf("sandbox output %q, want ready and hello", b)
				}
			})
		}
	}
}

// teardownBeside tears a pending session's run down as the launcher does,
// with the runtime's RuntimeDone, through a runtime binary that records
// each call: it must be clean, call no runtime, and find the runtime's
// process and state gone.
func teardownBeside(t *testing.T, r Runtime, id, run string, ns uint64, s *Session, cleanup func() error) {
	t.Helper()
	recorder, calls := recordingRuntime(t, r)
	rpid, rstart := s.Runtime()
	var parts []string
	rec := recorder.Teardown(context.Background(), Target{
		ID: id, RunDir: run, PidNS: ns, InitPid: s.Pid(), Cgroup: "/agentbox-enginetest/" + id,
		RuntimePid: rpid, RuntimeStart: rstart, RuntimeDone: s.RuntimeDone(),
		Trace: func(part string, _ time.Duration) { parts = append(parts, part) },
	}, cleanup)
	if rec.Decision != ledger.DecisionClean {
		t.Errorf("teardown %+v, want clean", rec)
	}
	if !isDone(s.RuntimeDone()) || !runtimeGone(rpid, rstart) {
		t.Error("teardown ended before the runtime was collected")
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("teardown called %s after its foreground run deleted the container: %q", r.Name, b)
	}
	if _, err := os.Lstat(filepath.Join(r.Root, id)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the runtime's state of %s is still there: %v", id, err)
	}
	if _, err := os.Lstat(run); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the run directory is still there: %v", err)
	}
	if want := "kill cleanups bundle runtime delete bundle log walk cgroups run directory proof"; strings.Join(parts, " ") != want {
		t.Errorf("teardown parts %q, want %q (the runtime awaited beside the cleanups and the bundle but its log)", parts, want)
	}
}
