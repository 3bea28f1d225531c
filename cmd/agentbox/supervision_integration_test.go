//go:build integration && linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/netpolicy"
)

// alive reports whether pid runs: it exists and is no zombie (a zombie
// runs nothing and holds no file; only its parent's wait removes it).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// reapAdopted collects those of pids that are zombies of this process: the
// probe tests run launches in this process, which makes it a child
// subreaper, so it adopts the zombie of a killed launcher's init, which
// only its parent's wait removes (on a real host, the adopter is a shell's
// init or systemd, which reap).
func reapAdopted(pids []int) {
	for _, pid := range pids {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err == nil && strings.Contains(string(status), "\nPPid:\t"+strconv.Itoa(os.Getpid())+"\n") {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// The sandbox dies with its launcher: a launcher killed with SIGKILL while
// the agent runs leaves no process of the sandbox running a second later
// (init sees its channel to the launcher close and ends the namespace),
// and the next gc still finds and cleans the rest.
func TestSandboxDiesWithItsLauncher(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	cmd := exec.Command(agentboxBin, "run", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000 & touch ready; sleep 1000")
	cmd.Env, cmd.Dir = env, ws
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runDir, meta := waitForAgent(t, envValue(env, "AGENTBOX_RUN_ROOT"), filepath.Join(ws, "ready"))
	pids := engine.PidsInNamespace(meta.PidNS)
	if len(pids) < 4 { // init, the agent's sh and its two sleeps
		t.Fatalf("sandbox processes %v: want init, the agent and its two children", pids)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	for _, pid := range pids {
		for alive(pid) && time.Since(killed) < time.Second {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			t.Errorf("pid %d (%q) of the sandbox still runs 1s after its launcher was killed", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	if !t.Failed() {
		t.Logf("the sandbox's %d processes were gone %v after the launcher's SIGKILL", len(pids), time.Since(killed).Round(time.Millisecond))
	}
	reapAdopted(pids)
	if _, err := os.Stat(runtimeState(meta)); err != nil {
		t.Fatalf("no runtime state left for gc; the rest of this test proves nothing: %v", err)
	}
	if r := runIn(t, env, ws, "gc", "--json"); r.code != 0 || !strings.Contains(r.stdout, meta.RunID) {
		t.Fatalf("gc exit %d, output %q, want a record of %s\n%s", r.code, r.stdout, meta.RunID, r.stderr)
	}
	assertNothingLeft(t, runDir, meta)
}

// The agent cannot change its init's resource limits: init runs under a uid
// the agent does not have. `prlimit --pid 1 --nofile=4:4` (which, with init
// as the agent's uid, starved the gateway bridge init serves) fails with
// EPERM, and the bridge answers afterwards.
func TestAgentCannotChangeInitsLimits(t *testing.T) {
	uid, gid := testUser(t)
	testutil.RequireBinary(t, "prlimit", "util-linux")
	testutil.RequireBinary(t, "curl", "curl")
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	r := runIn(t, env, ws, "run", "--", "prlimit", "--pid", "1", "--nofile=4:4")
	if r.code == 0 || !strings.Contains(r.stderr, "Operation not permitted") {
		t.Errorf("prlimit of PID 1 from the agent: exit %d, want non-zero with EPERM\n%s", r.code, r.stderr)
	}
	health := "http://127.0.0.1:" + strconv.Itoa(netpolicy.DefaultPort) + netpolicy.HealthPath
	r = runIn(t, env, ws, "run", "--", "sh", "-c",
		"prlimit --pid 1 --nofile=4:4; echo prlimit=$?; curl -s -o /dev/null -m 5 -w 'bridge=%{http_code}\\n' "+health)
	obs := observations(r.stdout)
	if r.code != 0 || obs["prlimit"] == "0" || obs["bridge"] != "200" {
		t.Errorf("exit %d, observed %v: want prlimit refused and the gateway bridge answering 200\n%s\n%s", r.code, obs, r.stdout, r.stderr)
	}
}

// The runtime makes the sandbox's pty owned by init's uid; the agent gets it
// handed over, so that it can open its terminal by name as well as use the
// inherited fds. With a terminal on stdin only (stdout redirected), the
// agent starts too: that terminal is not the sandbox's, and init neither
// makes it a foreground terminal nor hands it over.
func TestAgentOwnsItsTerminal(t *testing.T) {
	uid, gid := testUser(t)
	ws := workspaceOwnedBy(t, uid, gid)
	env := isolatedEnv(t)
	out := filepath.Join(ws, "redirected")
	agent, want := `echo owner=$(stat -c %u $(tty)) self=$(id -u); echo >$(tty) && echo open=ok`, "owner="+strconv.Itoa(uid)+" self="+strconv.Itoa(uid)
	if onRunsc() {
		// runsc's pty has no name in the Sentry (agentTTYName): the agent
		// opens it as its controlling terminal, /dev/tty.
		agent, want = `tty >/dev/null || echo no-name; echo >/dev/tty && echo open=ok`, "no-name"
	}
	inner := agentboxBin + ` run -- sh -c '` + agent + `'; ` +
		agentboxBin + ` run -- sh -c 'echo started-without-a-pty' > ` + out + `; echo redirected-exit=$?`
	b, err := scriptCommand(t, env, ws, inner).CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, b)
	}
	obs := observations(strings.ReplaceAll(string(b), "\r", ""))
	if obs["open"] != "ok" || !strings.Contains(string(b), want) {
		t.Errorf("the agent (uid %d) does not own or cannot open its pty:\n%s", uid, b)
	}
	data, _ := os.ReadFile(out)
	if obs["redirected-exit"] != "0" || !strings.Contains(string(data), "started-without-a-pty") {
		t.Errorf("with stdout redirected: exit %q, output %q\n%s", obs["redirected-exit"], data, b)
	}
}
