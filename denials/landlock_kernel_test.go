//go:build linux

package denials

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
)

// landlockHelperEnv makes the test binary the confined process of
// TestWatchLandlockReadsTheKernel: its value is the test's directory.
const landlockHelperEnv = "AGENTBOX_DENIALS_LANDLOCK_HELPER"

// landlockHelper waits for the test's go on stdin, confines itself as
// agentbox-init's child does (read-only /, writable DIR/ok, logging after
// exec), then executes a shell that creates a file in DIR (refused) and
// one in DIR/ok (allowed).
func landlockHelper(dir string) int {
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 1
	}
	cfg := landlock.V9.BestEffort().EnableLoggingForSubprocesses()
	if err := cfg.RestrictPaths(landlock.RODirs("/"), landlock.RWDirs(filepath.Join(dir, "ok"))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	script := fmt.Sprintf("echo x > %s/denied; echo y > %s/ok/allowed; exit 0", dir, dir)
	err := unix.Exec("/bin/sh", []string{"sh", "-c", script}, []string{"PATH=/usr/bin:/bin"})
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// On this kernel, with auditing on for the test's duration: the watch
// reads the helper's one refusal, after its exec, from the multicast
// group, with its pid and command name; the allowed write is not there.
// With auditing off, the watch says so.
func TestWatchLandlockReadsTheKernel(t *testing.T) {
	testutil.RequireRoot(t)
	abi, _ := llsys.LandlockGetABIVersion()
	if abi < LandlockLogABI {
		testutil.Skip(t, fmt.Sprintf("Landlock ABI %d: the kernel logs no Landlock denials", abi))
	}
	was, err := SetAuditEnabled(false)
	if err != nil {
		testutil.Skip(t, "cannot set kernel auditing: "+err.Error())
	}
	t.Cleanup(func() {
		if _, err := SetAuditEnabled(was); err != nil {
			t.Errorf("putting kernel auditing back (enabled=%v): %v", was, err)
		}
	})
	if off := WatchLandlock(LandlockOptions{ABI: abi}).Unreadable(); off != "kernel audit is disabled (enable: auditctl -e 1, or boot with audit=1)" {
		t.Errorf("audit off: %q", off)
	}
	if _, err := SetAuditEnabled(true); err != nil {
		t.Fatal(err)
	}
	if on, err := AuditEnabled(); err != nil || !on {
		t.Fatalf("AuditEnabled after enabling: %v, %v", on, err)
	}

	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "ok"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := WatchLandlock(LandlockOptions{ABI: abi})
	if off := w.Unreadable(); off != "" {
		t.Fatal(off)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), landlockHelperEnv+"="+dir)
	in, _ := cmd.StdinPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.AgentStarted(cmd.Process.Pid, 0)
	fmt.Fprintln(in)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	log := w.Stop()
	if _, err := os.Stat(filepath.Join(dir, "denied")); err == nil {
		t.Fatal("the helper's refused write happened: Landlock did not confine it")
	}
	if _, err := os.Stat(filepath.Join(dir, "ok", "allowed")); err != nil {
		t.Fatalf("the allowed write: %v", err)
	}
	if !log.Layer.Logged || log.Layer.Detail != "" {
		t.Errorf("layer %+v, want logged without remarks", log.Layer)
	}
	if len(log.Denials) != 1 {
		t.Fatalf("denials %+v, want the one refused create", log.Denials)
	}
	d := log.Denials[0]
	if d.Syscall != "fs.make_reg" || d.Args != "path="+dir || d.PID != cmd.Process.Pid || d.Comm != "sh" || d.Time.IsZero() {
		t.Errorf("denial %+v, want fs.make_reg path=%s by pid %d (sh)", d, dir, cmd.Process.Pid)
	}
	if strings.Contains(d.Args, "allowed") {
		t.Errorf("the allowed write is listed: %+v", d)
	}
}
