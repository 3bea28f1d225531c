//go:build integration && linux

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Launchers sharing one run root start sandboxes side by side: each one's
// gc, at its start, cleans only runs whose launcher is gone, never a run
// another launcher has just made (a run directory once stood unlocked for
// an instant after its mkdir, and a concurrent gc removed it: "run
// directory: open …/.meta.json…: no such file or directory").
func TestConcurrentLaunchesShareTheRunRoot(t *testing.T) {
	uid, gid := testUser(t)
	env := isolatedEnv(t)
	const launchers, each = 3, 8
	type failure struct {
		code   int
		stderr string
	}
	failures := make(chan failure, launchers*each)
	var wg sync.WaitGroup
	for range launchers {
		ws := workspaceOwnedBy(t, uid, gid)
		wg.Go(func() {
			for range each {
				cmd := exec.Command(agentboxBin, "run", "--", "true")
				var errb bytes.Buffer
				cmd.Env, cmd.Dir, cmd.Stderr = env, ws, &errb
				if err := cmd.Run(); err != nil {
					failures <- failure{cmd.ProcessState.ExitCode(), errb.String()}
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("a launch beside others failed: exit %d\n%s", f.code, f.stderr)
	}
	// Every run cleaned up after itself, and nothing was left half made.
	for _, pattern := range []string{"runs/*", "userns/*.lease"} {
		if left, _ := filepath.Glob(filepath.Join(envValue(env, "AGENTBOX_RUN_ROOT"), pattern)); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}
}
