package nsexec

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// GoLocked runs fn on a new goroutine locked to an OS thread that is not
// the process's main thread, and returns at once. fn may change what
// belongs to its thread (its mount namespace, its filesystem attributes)
// and then end still locked: Go retires such a thread, so nothing else
// ever runs on it. The main thread is the one exception Go cannot retire
// (it parks it for good instead), and it is the thread whose namespaces
// /proc/self names: a namespace left on it would become what every
// /proc/self/mountinfo and /proc/self/ns/mnt of the process reads from
// then on, the host's view the launcher's verification and teardown
// compare with. So when the new goroutine finds itself on the main thread
// it holds that thread (a locked thread runs only its own goroutine) while
// fn runs on another one, and gives it back unchanged.
func GoLocked(fn func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != os.Getpid() {
			fn()
			return // still locked, unless fn unlocked: see above
		}
		done := make(chan struct{})
		GoLocked(func() { defer close(done); fn() })
		<-done
		runtime.UnlockOSThread()
	}()
}

// StartInMountNS starts cmd (a runtime invocation) in a new mount
// namespace in which the mount at hide is covered (unless "") and the
// composition file compose is laid out (unless ""): what mntns-exec does,
// without its process. A thread of GoLocked unshares its mount namespace
// (and with it its filesystem attributes; neither needs the process to be
// single-threaded), makes the mounts there and starts cmd from it: a child
// takes the mount namespace of the thread that forks it, and Go forks on
// the calling thread. The goroutine then ends still locked, so the runtime
// retires that thread and nothing else of this process ever runs in the
// namespace (Go starts new threads from a template thread, never from a
// locked one). The namespace lives as long as cmd's processes.
func StartInMountNS(cmd *exec.Cmd, hide, compose string) error {
	started := make(chan error, 1)
	GoLocked(func() {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			started <- fmt.Errorf("a mount namespace for %s: unshare: %w", cmd.Path, err)
			return
		}
		if err := Prepare(hide, compose); err != nil {
			started <- fmt.Errorf("the mount namespace of %s: %w", cmd.Path, err)
			return
		}
		started <- cmd.Start()
	})
	return <-started
}
