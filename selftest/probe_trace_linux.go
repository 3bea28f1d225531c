package selftest

import (
	"errors"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seizeAndDetach is the tracer on a locked thread; where the seize works,
// the thread stays locked, so that Go retires it with the probe's
// goroutine (Run) and no other probe runs on a thread that was a tracer.
func seizeAndDetach(pid int) error {
	runtime.LockOSThread()
	if _, err := rawSyscall(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	if _, err := rawSyscall(unix.SYS_PTRACE, unix.PTRACE_INTERRUPT, uintptr(pid), 0, 0); err == nil {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WALL, nil)
	}
	_, _ = rawSyscall(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, 0)
	return nil
}

// probeProcessVMReadv reads one byte at address 8 of the target: the access
// check (PTRACE_MODE_ATTACH) comes first, then the read fails with EFAULT.
func probeProcessVMReadv(e *Env) outcome {
	pid, skip := tracePID(e)
	if skip != nil {
		return *skip
	}
	var buf [1]byte
	local := unix.Iovec{Base: &buf[0], Len: 1}
	remote := [2]uintptr{8, 1}
	_, err := rawSyscall(unix.SYS_PROCESS_VM_READV, uintptr(pid), uintptr(unsafe.Pointer(&local)), 1,
		uintptr(unsafe.Pointer(&remote)), 1, 0)
	d, o := decideSyscall(err, unix.EFAULT)
	if errors.Is(err, unix.ESRCH) {
		d, o = Unknown, "no-such-process"
	}
	return outcome{
		target: "pid " + strconv.Itoa(pid), decision: d, observed: o,
		detail: "process_vm_readv of an unmapped address of pid " + strconv.Itoa(pid) + ": " + errnoName(err),
	}
}

// probeOpenByHandle encodes a handle of a directory it can see and opens it
// by handle (CAP_DAC_READ_SEARCH). When no filesystem gives a handle, a NULL
// handle tells at least whether the syscall is filtered.
func probeOpenByHandle(*Env) outcome {
	for _, dir := range []string{"/", "/tmp", "/etc", "."} {
		h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, dir, 0)
		if err != nil {
			continue
		}
		err = openByHandle(dir, h)
		d, o := decideSyscall(err)
		return outcome{target: dir, decision: d, observed: o, detail: "open_by_handle_at of a handle of " + dir + ": " + o}
	}
	_, err := rawSyscall(unix.SYS_OPEN_BY_HANDLE_AT, atFDCWD, 0, 0)
	d, o := decideSyscall(err)
	if errors.Is(err, unix.EFAULT) {
		d = Unknown
	}
	return outcome{
		target: "NULL handle", decision: d, observed: o,
		detail: "no filesystem gave a handle; open_by_handle_at with a NULL handle: " + o,
	}
}

func openByHandle(dir string, h unix.FileHandle) error {
	mfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(mfd)
	fd, err := unix.OpenByHandleAt(mfd, h, unix.O_RDONLY|unix.O_CLOEXEC)
	return closeOnSuccess(uintptr(fd), err)
}

// probePrlimit reads the target's RLIMIT_NOFILE and writes the same value
// back, so that it changes nothing even where it is allowed. The kernel
// checks permission for the read as for the write (check_prlimit_permission:
// the caller's uid must equal the target's real, effective and saved uids,
// and its gid the target's gids, or it needs CAP_SYS_RESOURCE over the
// target's user namespace), so a caller that may not gets EPERM at once. An
// agent that could do this could starve init of fds (NOFILE 4 stopped the
// gateway bridge init serves).
func probePrlimit(e *Env) outcome {
	pid, skip := tracePID(e)
	if skip != nil {
		return *skip
	}
	var cur unix.Rlimit
	err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &cur)
	step := "read"
	if err == nil {
		step = "write back"
		err = unix.Prlimit(pid, unix.RLIMIT_NOFILE, &cur, nil)
	}
	return pidOutcome(pid, err, "limits-writable", "prlimit of pid "+strconv.Itoa(pid)+" RLIMIT_NOFILE ("+step+")")
}

// atFDCWD is AT_FDCWD as a syscall argument.
var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()
