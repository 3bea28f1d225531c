package engine

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
)

// Foreground is one runtime process that runs a sandbox in the foreground
// (RUNTIME run, no --detach): it creates and starts the sandbox, stays the
// parent of the sandbox's first process, and when that process exits it
// collects it, removes the container's state and cgroups itself and exits
// with its status. Teardown then needs no runtime process of its own: the
// state directory's absence, with the walk of /proc and the cgroups, is the
// proof (Runtime.Teardown).
//
// The runtime runs in a process group of its own, so that no terminal's
// signal reaches it (it would forward each to the sandbox a second time);
// the launcher signals the sandbox's first process itself (Signal), through
// a pidfd, which a recycled pid can never redirect. The runtime gets
// SIGKILL when the launcher dies (its parent-death signal, see start):
// after a SIGKILLed launcher the sandbox is as a detached run's would be,
// orphaned with its state in place, and gc cleans it the same way.
type Foreground struct {
	// Pid is the host pid of the sandbox's first process.
	Pid int
	// RuntimePid is the runtime's own process, and RuntimeStart its start
	// time (clock ticks after boot, /proc/PID/stat), which names it beyond
	// the reuse of its pid (meta.json records both for teardown).
	RuntimePid   int
	RuntimeStart uint64

	name   string // the runtime's name, for errors
	initFD int    // a pidfd of the sandbox's first process, -1 if none
	done   chan struct{}
	err    error  // what waiting for the runtime returned, once done is closed
	logged string // the error lines of its log, read once it exited (logErrors)
}

// Done is closed once the runtime has exited and been collected.
func (f *Foreground) Done() <-chan struct{} { return f.done }

// Wait waits for the runtime and returns its exit status, which is that of
// the sandbox's first process (the runtime passes it on: 128 plus the
// signal that killed it). The runtime's own failure is an error: killed
// by a signal, or an error line in its log (where runc and crun report a
// failed run, exiting 1, which a status alone could not tell from the
// sandbox's own 1).
func (f *Foreground) Wait() (int, error) {
	<-f.done
	code := 0
	var ee *exec.ExitError
	switch {
	case f.err == nil:
	case errors.As(f.err, &ee) && ee.Exited():
		code = ee.ExitCode()
	default:
		return -1, fmt.Errorf("%s run: %w", f.name, f.err)
	}
	if f.logged != "" {
		return code, fmt.Errorf("%s run (exit status %d): %s", f.name, code, f.logged)
	}
	return code, nil
}

// Signal sends sig to the sandbox's first process.
func (f *Foreground) Signal(sig syscall.Signal) error {
	if f.initFD < 0 {
		return fmt.Errorf("signal the sandbox's first process: %w", syscall.ESRCH)
	}
	return signalPidfd(f.initFD, sig)
}

// Close releases the pidfd of the sandbox's first process; the runtime
// process itself is collected by the goroutine that started it.
func (f *Foreground) Close() {
	if f.initFD >= 0 {
		closeFD(f.initFD)
		f.initFD = -1
	}
}

// Foreground reports whether r runs a held sandbox without a terminal, to
// be started with o, in the foreground (RunForeground): crun as root, and
// runc as root when the sandbox's stdout and stderr are not one file. A
// terminal sandbox's pty comes through the console socket, which only a
// detached run sends. A foreground runc does not hand its stdio to the
// sandbox, as crun does: it gives it pipes of its own and copies each to
// its stdout and stderr, one goroutine apiece, so writes to the two that
// went to one file in order (a terminal, `>log 2>&1`) could arrive out of
// it. A rootless launcher's runtime runs behind newuidmap's helper in a
// user namespace of its own, and runsc's sandbox and gofer processes have
// their own state and kill handling (runsc.go): those stay detached.
func (r Runtime) Foreground(o CreateOptions) bool {
	if !foregroundSupported || r.UserNS != nil || o.ConsoleSocket != "" {
		return false
	}
	switch r.Name {
	case "crun":
		return true
	case "runc":
		out, errf := o.Stdio.Out, o.Stdio.Err
		return out == nil || errf == nil || out != errf && !sameFile(out, errf)
	}
	return false
}
