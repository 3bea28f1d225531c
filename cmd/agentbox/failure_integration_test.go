//go:build integration && linux

package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
)

// waitStopped waits until process pid is stopped (state T) and returns the
// run directory and meta of the run it launched.
func waitStopped(t *testing.T, pid int, runRoot string) (string, engine.Meta) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err == nil {
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(f) > 0 && f[0] == "T" {
				metas, _ := filepath.Glob(filepath.Join(runRoot, "runs", "*", "meta.json"))
				if len(metas) == 1 {
					var m engine.Meta
					data, _ := os.ReadFile(metas[0])
					if json.Unmarshal(data, &m) == nil {
						return filepath.Dir(metas[0]), m
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the launcher did not pause within 20s")
	return "", engine.Meta{}
}

// A launcher SIGKILLed at each point of the pipeline leaves what it left;
// the next invocation's gc finds it, says what it found, and leaves nothing.
// The launcher is launchertest, the test-only build of the same pipeline
// that stops itself after the named step (the agentbox binary has no such
// hook).
func TestLauncherKilledAtEachStepIsCleaned(t *testing.T) {
	uid, gid := testUser(t)
	for _, at := range []string{"create", "self-test", "hand over"} {
		t.Run(strings.ReplaceAll(at, " ", "-"), func(t *testing.T) {
			ws := workspaceOwnedBy(t, uid, gid)
			env := isolatedEnv(t)
			runRoot := envValue(env, "AGENTBOX_RUN_ROOT")
			cmd := exec.Command(launchertestBin, "-pause-after", at, "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
			cmd.Env, cmd.Dir = env, ws
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			runDir, meta := waitStopped(t, cmd.Process.Pid, runRoot)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// Left behind: the run directory, the runtime's state and the
			// run's cgroup. The processes end by themselves: create starts
			// agentbox-init in the same runtime call (it holds the agent on
			// its channel), and init ends the sandbox when it sees the
			// channel to the launcher close.
			if _, err := os.Stat(runtimeState(meta)); err != nil {
				t.Fatalf("no runtime state left after a kill at %q; the test proves nothing: %v", at, err)
			}
			// On containerd the daemon holds the container and the task,
			// and their shim runs, until gc.
			if onContainerd() && shimPid(testContainerdAddress(), meta.RunID) <= 0 {
				t.Fatalf("no shim of %s runs after a kill at %q; the test proves nothing about gc on containerd", meta.RunID, at)
			}
			canaries := meta.Canaries
			r := runIn(t, env, ws, "gc", "--json")
			if r.code != 0 {
				t.Fatalf("gc exit %d: %s %s", r.code, r.stdout, r.stderr)
			}
			var rec ledger.Record
			if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &rec); err != nil {
				t.Fatalf("gc output %q: %v", r.stdout, err)
			}
			if rec.RunID != meta.RunID || rec.Kind != ledger.KindGC || !strings.Contains(rec.Notes, "launcher (pid") || !rec.Teardown.Clean() {
				t.Errorf("gc record %+v", rec)
			}
			assertNothingLeft(t, runDir, meta)
			for _, c := range canaries {
				if _, err := os.Stat(c); err == nil {
					t.Errorf("canary %s left behind", c)
				}
			}
		})
	}
}

// Killing the agent from outside ends the run with the agent's death as the
// exit code, and teardown is clean.
func TestKilledAgentEndsTheRunCleanly(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	cmd := exec.Command(agentboxBin, "run", "--", "sh", "-c", "echo $$ > agent.pid; touch ready; sleep 1000")
	cmd.Env, cmd.Dir = env, ws
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runDir, meta := waitForAgent(t, envValue(env, "AGENTBOX_RUN_ROOT"), filepath.Join(ws, "ready"))
	if onRunsc() {
		killGvisorAgent(t, meta, ws) // the agent is a task of the Sentry, no host process
		assertKilledAgentEnded(t, cmd, runDir, meta)
		return
	}
	var agent int
	for _, pid := range engine.PidsInNamespace(meta.PidNS) {
		if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.HasPrefix(string(cmdline), "/usr/bin/sh\x00") {
			agent = pid
		}
	}
	if agent == 0 {
		t.Fatal("agent process not found")
	}
	if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	assertKilledAgentEnded(t, cmd, runDir, meta)
}

func assertKilledAgentEnded(t *testing.T, cmd *exec.Cmd, runDir string, meta engine.Meta) {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 {
		t.Errorf("launcher ended with %v, want the agent's 137", err)
	}
	assertNothingLeft(t, runDir, meta)
}
