package engine

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestZombieIsNoSurvivor(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if zombie(1) {
		t.Error("pid 1 is no zombie")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !zombie(pid) { // exited, not yet reaped
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never became a zombie", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	if zombie(pid) {
		t.Error("a reaped pid is no zombie")
	}
}
