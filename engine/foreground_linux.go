package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/nsexec"
)

const foregroundSupported = true

// RunForeground starts the sandbox with one runtime process that stays for
// its whole life (see Foreground), and returns once the runtime has written
// the pid of the sandbox's first process. ctx bounds that wait only (the
// runtime is killed when it ends first): the runtime outlives the setup
// whose context a launcher passes here.
func (r Runtime) RunForeground(ctx context.Context, id, bundle string, o CreateOptions) (*Foreground, error) {
	if o.ConsoleSocket != "" {
		return nil, errors.New("a terminal sandbox's runtime runs detached: its pty comes through the console socket")
	}
	inv, err := r.launching(context.Background(), []string{"run"}, id, bundle, o)
	if err != nil {
		return nil, err
	}
	inv.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	w, err := watchDir(bundle)
	if err != nil {
		return nil, fmt.Errorf("%s run: watch the bundle for the pid file: %w", r.Name, err)
	}
	log := runtimeLog(bundle)
	f := &Foreground{name: r.Name, initFD: -1, done: make(chan struct{})}
	if err := f.start(inv, log, w); err != nil {
		w.close()
		return nil, r.cmdError("run", err, "")
	}
	pid, err := f.awaitPid(ctx, w, initPidFile(bundle))
	w.unwatch()
	if err != nil {
		if !isDone(f.done) {
			_ = inv.cmd.Process.Kill()
			<-f.done
		}
		if msg := logErrors(log); msg != "" {
			return nil, fmt.Errorf("%s run: %s", r.Name, msg)
		}
		return nil, fmt.Errorf("%s run: %w", r.Name, err)
	}
	f.Pid = pid
	f.initFD = f.openInit(pid)
	return f, nil
}

// collected records how the runtime ended, err from waiting for it, and
// the errors its JSON log at log holds, and closes done: from then on the
// bundle, where the log is, may go (teardown removes it while the launcher
// still settles the run).
func (f *Foreground) collected(err error, log string) {
	f.err = err
	f.logged = logErrors(log)
	close(f.done)
}

// start starts the runtime from a goroutine locked to an OS thread other
// than the main one (nsexec.GoLocked), which holds that thread until the
// runtime has exited and been collected: the parent-death signal fires
// when the thread that forked the child ends, not the process. Once the
// runtime has exited, it closes w, the bundle's watch (see dirWatch).
// When the invocation hides a mount or lays out nested binds, the thread
// first unshares its mount namespace and makes them there (as
// runInMountNS does), and then ends still locked, so that Go retires it
// and nothing else ever runs in that namespace.
func (f *Foreground) start(inv invocation, log string, w *dirWatch) error {
	started := make(chan error, 1)
	nsexec.GoLocked(func() {
		private := inv.hide != "" || inv.compose != ""
		if private {
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				started <- fmt.Errorf("a mount namespace: unshare: %w", err)
				return
			}
			if err := nsexec.Prepare(inv.hide, inv.compose); err != nil {
				started <- fmt.Errorf("the mount namespace: %w", err)
				return
			}
		}
		if err := inv.cmd.Start(); err != nil {
			started <- err
			return
		}
		f.RuntimePid = inv.cmd.Process.Pid
		f.RuntimeStart, _, _ = processStart(f.RuntimePid) // our child, not yet collected
		started <- nil
		err := inv.cmd.Wait()
		w.close()
		f.collected(err, log)
		if !private {
			runtime.UnlockOSThread()
		}
	})
	return <-started
}

// awaitPid waits for the runtime's pid file (each change in the bundle
// directory rechecks it, and a slow poll stands behind the events), for
// the runtime's exit, or for ctx.
func (f *Foreground) awaitPid(ctx context.Context, w *dirWatch, path string) (int, error) {
	for {
		if pid, err := readPid(path); err == nil {
			return pid, nil
		}
		select {
		case <-w.events:
		case <-time.After(50 * time.Millisecond):
		case <-f.done:
			if pid, err := readPid(path); err == nil {
				return pid, nil // the sandbox ran and ended already
			}
			if f.err != nil {
				return 0, fmt.Errorf("exited before it wrote the pid file: %w", f.err)
			}
			return 0, errors.New("exited before it wrote the pid file")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// openInit opens a pidfd of the sandbox's first process, pid, and keeps it
// only while the runtime still runs and is pid's parent: then pid was not
// recycled before the pidfd pinned it. It returns -1 when the process has
// ended already (its exit status is the runtime's).
func (f *Foreground) openInit(pid int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	if isDone(f.done) || ParentPid(pid) != f.RuntimePid || unix.PidfdSendSignal(fd, 0, nil, 0) != nil {
		unix.Close(fd)
		return -1
	}
	return fd
}

// awaitInit waits until the sandbox's first process has exited, through
// its pidfd, and reports true; false when there is no pidfd, or when the
// runtime has exited and the pidfd still says nothing of the process (its
// status is then the answer, as before). The
// pidfd of a pid namespace's first process turns readable only once the
// kernel has ended and collected every other process of its namespace
// (zap_pid_ns_processes, in its exit, before the exit is signalled): the
// sandbox is empty then, though its runtime has yet to collect it and to
// delete the container.
func (f *Foreground) awaitInit() bool {
	if f.initFD < 0 {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(f.initFD), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(initPoll/time.Millisecond))
		switch {
		case n > 0:
			return fds[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0 // exited; reaped, too, for POLLHUP
		case err != nil && !errors.Is(err, unix.EINTR):
			return false
		case isDone(f.done):
			return false
		}
	}
}

// initPoll is how long each poll of awaitInit lasts before it checks
// whether the runtime has exited meanwhile.
const initPoll = 50 * time.Millisecond

func signalPidfd(fd int, sig syscall.Signal) error {
	return unix.PidfdSendSignal(fd, sig, nil, 0)
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// dirWatch passes on, as ticks, the inotify events of files written or
// renamed into one directory.
//
// Its end has two steps. unwatch removes the watch at once, without
// waiting; close closes the inotify instance later. Closing an instance
// waits for the kernel to free the marks it had, behind an SRCU grace
// period of fsnotify's (about 15 ms here, measured in inotify_release):
// closed right after the pid file, that wait lay on the way to the
// self-test's first result. Closed once the runtime has exited, it finds
// the mark freed long before.
type dirWatch struct {
	wd     int
	f      *os.File
	events chan struct{}
}

func watchDir(dir string) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	wd, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	w := &dirWatch{wd: wd, f: os.NewFile(uintptr(fd), "inotify"), events: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := w.f.Read(buf); err != nil {
				return // closed
			}
			select {
			case w.events <- struct{}{}:
			default:
			}
		}
	}()
	return w, nil
}

// unwatch removes the watch; the instance stays open until close. (The
// runtime may have exited, and close been called, already: Control does
// nothing then.)
func (w *dirWatch) unwatch() {
	if rc, err := w.f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _, _ = unix.InotifyRmWatch(int(fd), uint32(w.wd)) })
	}
}

func (w *dirWatch) close() { w.f.Close() }

// runtimeGone reports whether the process named pid and start has exited:
// it is not there, is a zombie, or pid is someone else's now.
func runtimeGone(pid int, start uint64) bool {
	st, zombie, err := processStart(pid)
	return err != nil || zombie || st != start
}

// killRuntime sends SIGKILL to the process named pid and start, through a
// pidfd opened before its start time is checked again.
func killRuntime(pid int, start uint64) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if !runtimeGone(pid, start) {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}
