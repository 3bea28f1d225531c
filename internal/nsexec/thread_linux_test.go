package nsexec

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGoLockedNeverRunsOnTheMainThread: a goroutine that locks itself
// lands on the main thread about one time in three here (the main
// goroutine waits in the test, leaving that thread free), and a mount
// namespace left there would become the process's /proc/self view.
func TestGoLockedNeverRunsOnTheMainThread(t *testing.T) {
	onMain := 0
	for range 300 {
		tid := make(chan int)
		GoLocked(func() { tid <- unix.Gettid(); runtime.UnlockOSThread() })
		if <-tid == os.Getpid() {
			onMain++
		}
	}
	if onMain > 0 {
		t.Fatalf("fn ran on the main thread %d times of 300", onMain)
	}
}
