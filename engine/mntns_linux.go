package engine

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/nsexec"
)

// runInMountNS runs cmd (a runtime invocation) in a new mount namespace in
// which the mount at hide is detached (unless hide is "") and the
// composition file compose is laid out (unless ""): what the mntns-exec
// helper does, without its process. A goroutine locks itself to an OS
// thread, unshares that thread's mount namespace (and, with it, its
// filesystem attributes; neither needs the process to be single-threaded),
// makes the mounts there and starts cmd from it: a child takes the mount
// namespace of the thread that forks it, and Go forks on the calling
// thread. The goroutine then ends still locked, so the runtime retires
// that thread and nothing else ever runs in the namespace (Go starts new
// threads from a template thread, never from a locked one). The namespace
// lives as long as the runtime's processes, as the helper's did.
func runInMountNS(cmd *exec.Cmd, hide, compose string) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			started <- fmt.Errorf("a mount namespace for %s: unshare: %w", cmd.Path, err)
			return
		}
		if err := nsexec.Prepare(hide, compose); err != nil {
			started <- fmt.Errorf("the mount namespace of %s: %w", cmd.Path, err)
			return
		}
		started <- cmd.Start()
	}()
	if err := <-started; err != nil {
		return err
	}
	return cmd.Wait()
}
