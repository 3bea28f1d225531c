package selftest

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func rawSyscall(nr uintptr, a ...uintptr) (uintptr, error) {
	var x [6]uintptr
	copy(x[:], a)
	r, _, en := unix.Syscall6(nr, x[0], x[1], x[2], x[3], x[4], x[5])
	if en != 0 {
		return r, en
	}
	return r, nil
}

// callMount: the path lookup, then may_mount() (CAP_SYS_ADMIN over the mount
// namespace), then tmpfs's option parser, which rejects the unknown option
// with EINVAL. Should a kernel ever accept it, the tmpfs is detached at once.
func callMount() error {
	dir, err := os.MkdirTemp("", "agentbox-probe-")
	if err != nil {
		dir = "/"
	} else {
		defer os.Remove(dir)
	}
	err = unix.Mount("agentbox-probe", dir, "tmpfs", 0, "agentbox_probe_invalid_option=1")
	if err == nil {
		_ = unix.Unmount(dir, unix.MNT_DETACH)
	}
	return err
}

// callFsopen: fsopen checks CAP_SYS_ADMIN over the mount namespace first; the
// context it returns is attached nowhere and freed on close.
func callFsopen() error {
	fd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	return closeOnSuccess(uintptr(fd), err)
}

// callUmount: may_mount() comes before the "is it a mount point" check.
func callUmount() error { return unix.Unmount("/proc/self/fdinfo", 0) }

// callPivotRoot: may_mount() is the first thing pivot_root checks.
func callPivotRoot() error { _, err := rawSyscall(unix.SYS_PIVOT_ROOT, 0, 0); return err }

// callSetns: joining the namespace one is in needs CAP_SYS_ADMIN and changes
// nothing; the thread is locked so that only it is involved, and where the
// call works it stays locked, so that Go retires the thread with the
// probe's goroutine (Run) and no other probe runs on it.
func callSetns() error {
	runtime.LockOSThread()
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return errors.Join(errors.New("open own netns"), err)
	}
	defer unix.Close(fd)
	err = unix.Setns(fd, unix.CLONE_NEWNET)
	if err != nil {
		runtime.UnlockOSThread()
	}
	return err
}

// callKeyctl: without create, a missing thread keyring is ENOKEY and nothing
// is created.
func callKeyctl() error {
	_, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_THREAD_KEYRING, 0, 0, 0)
	return err
}

func callAddKey() error { _, err := rawSyscall(unix.SYS_ADD_KEY, 0, 0, 0, 0, 0); return err }

// callBPF: BPF_PROG_GET_NEXT_ID checks CAP_SYS_ADMIN before the lookup, which
// finds nothing after INT_MAX-1.
func callBPF() error {
	attr := [3]uint32{0x7ffffffe, 0, 0}
	_, err := rawSyscall(unix.SYS_BPF, unix.BPF_PROG_GET_NEXT_ID, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
	return err
}

func callPerf() error {
	attr := unix.PerfEventAttr{
		Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_DUMMY,
		Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})), Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
	}
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	return closeOnSuccess(uintptr(fd), err)
}

// callUserfaultfd tries user-mode-only first (allowed to unprivileged callers
// since Linux 5.11), then the plain mode on kernels that lack the flag.
func callUserfaultfd() error {
	const userModeOnly = 1
	fd, err := rawSyscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|userModeOnly)
	if errors.Is(err, unix.EINVAL) {
		fd, err = rawSyscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC)
	}
	return closeOnSuccess(fd, err)
}

// callIOUring: io_uring_allowed() (sysctl io_uring_disabled) precedes the copy of params.
func callIOUring() error { _, err := rawSyscall(unix.SYS_IO_URING_SETUP, 1, 0); return err }

// callInitModule: may_init_module() (CAP_SYS_MODULE) precedes the copy.
func callInitModule() error {
	empty := []byte{0}
	_, err := rawSyscall(unix.SYS_INIT_MODULE, 0, 0, uintptr(unsafe.Pointer(&empty[0])))
	return err
}

// callFinitModule: may_init_module() precedes the fd lookup.
func callFinitModule() error {
	empty := []byte{0}
	_, err := rawSyscall(unix.SYS_FINIT_MODULE, ^uintptr(0), uintptr(unsafe.Pointer(&empty[0])), 0)
	return err
}

// callKexecLoad: kexec_load_check() tests CAP_SYS_BOOT before the segment
// count; 17 segments is one over KEXEC_SEGMENT_MAX, so nothing is loaded or
// unloaded.
func callKexecLoad() error { _, err := rawSyscall(unix.SYS_KEXEC_LOAD, 0, 17, 0, 0); return err }

// missingExecutable is a path that exists nowhere; cloneExecMissing execs it.
const missingExecutable = "/nonexistent/agentbox-probe-clone"

func cloneExecMissing(flag uintptr) error {
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Cloneflags: flag}}
	pid, err := syscall.ForkExec(missingExecutable, []string{"agentbox-probe"}, attr)
	if err == nil {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		return errors.New("the missing executable ran")
	}
	return err
}

// netlinkProtocols are the netlink protocols probeNetlink opens. Each is
// built into every kernel that has netlink, so opening one loads no module;
// NETLINK_ROUTE, which getaddrinfo needs, is the one a sandbox keeps.
var netlinkProtocols = []struct {
	name  string
	proto int
}{
	{"NETLINK_KOBJECT_UEVENT", unix.NETLINK_KOBJECT_UEVENT},
	{"NETLINK_SOCK_DIAG", unix.NETLINK_SOCK_DIAG},
	{"NETLINK_GENERIC", unix.NETLINK_GENERIC},
}

// probeNetlink opens a netlink socket of each protocol and closes it: no
// message is sent and nothing is bound. Creating one needs no privilege,
// so only a seccomp filter refuses it; any protocol that opens is ALLOW.
func probeNetlink(*Env) outcome {
	var w worst
	for _, p := range netlinkProtocols {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, p.proto)
		err = closeOnSuccess(uintptr(fd), err)
		d, o := decideSyscall(err)
		if d == Allow {
			o = "opened"
		}
		w.add(d, o, p.name+": "+errnoName(err))
	}
	return w.outcome("AF_NETLINK")
}

// The Linux names the portable kernel table uses.
const (
	cloneNewUser = unix.CLONE_NEWUSER
	cloneNewNS   = unix.CLONE_NEWNS
	cloneNewNet  = unix.CLONE_NEWNET
	errNoKey     = unix.ENOKEY
	afPacket     = unix.AF_PACKET
)
