package selftest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Each kernel probe calls the syscall with arguments chosen so that a caller
// who may perform the operation gets a harmless error (EFAULT on a NULL
// pointer, EBADF on fd -1, EINVAL on an invalid option or count) or a no-op,
// and a caller who may not gets EPERM, EACCES or ENOSYS. The comment on each
// call says which check comes first in the kernel. Where no such argument
// exists the probe performs the operation on an object of its own and undoes
// it at once (an fd it closes, a node in a temporary directory it removes).
func kernelProbes() []Probe {
	return []Probe{
		sysProbe("mount-tmpfs-denied", "/", "mount(2) of a tmpfs with an invalid option", callMount, unix.EINVAL),
		sysProbe("fsopen-denied", "tmpfs", "fsopen(2) of a tmpfs context (new mount API)", callFsopen),
		sysProbe("umount-denied", "/proc/self/fdinfo", "umount2(2) of a directory that is no mount point", callUmount, unix.EINVAL),
		sysProbe("pivot-root-denied", "NULL", "pivot_root(2) with NULL paths", callPivotRoot, unix.EFAULT),
		cloneProbe("unshare-user-denied", unix.CLONE_NEWUSER, "a child in a new user namespace"),
		cloneProbe("unshare-mount-denied", unix.CLONE_NEWNS, "a child in a new mount namespace"),
		cloneProbe("unshare-net-denied", unix.CLONE_NEWNET, "a child in a new network namespace"),
		sysProbe("setns-denied", "/proc/thread-self/ns/net", "setns(2) into the probe's own network namespace (a no-op)", callSetns),
		sysProbe("keyctl-denied", "thread keyring", "keyctl(2) lookup of the thread keyring without creating it", callKeyctl, unix.ENOKEY),
		sysProbe("add-key-denied", "NULL", "add_key(2) with a NULL type", callAddKey, unix.EFAULT),
		sysProbe("bpf-denied", "BPF_PROG_GET_NEXT_ID", "bpf(2) program id enumeration past the last id", callBPF, unix.ENOENT),
		sysProbe("perf-event-open-denied", "software dummy event", "perf_event_open(2) of a disabled software event on itself", callPerf),
		sysProbe("userfaultfd-denied", "user-mode-only", "userfaultfd(2) in user-mode-only mode", callUserfaultfd),
		sysProbe("io-uring-setup-denied", "NULL params", "io_uring_setup(2) with NULL params", callIOUring, unix.EFAULT),
		sysProbe("init-module-denied", "NULL image", "init_module(2) with a NULL image", callInitModule, unix.EFAULT),
		sysProbe("finit-module-denied", "fd -1", "finit_module(2) on fd -1", callFinitModule, unix.EBADF),
		sysProbe("kexec-load-denied", "17 segments", "kexec_load(2) with one segment over the limit", callKexecLoad, unix.EINVAL),
		{
			Name: "open-by-handle-at-denied", Group: GroupKernel, Expect: Deny, run: probeOpenByHandle,
			Summary: "open_by_handle_at(2) of a handle of its own root",
		},
		{
			Name: "ptrace-pid1-denied", Group: GroupKernel, Expect: Deny, run: probePtrace,
			Summary: "ptrace(2) PTRACE_SEIZE of PID 1, detached at once",
		},
		{
			Name: "process-vm-readv-pid1-denied", Group: GroupKernel, Expect: Deny, run: probeProcessVMReadv,
			Summary: "process_vm_readv(2) of an unmapped address of PID 1",
		},
		sockProbe("packet-socket-denied", unix.AF_PACKET, unix.SOCK_RAW, 0, "AF_PACKET raw socket"),
		sockProbe("raw-socket-denied", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_TCP, "AF_INET raw socket"),
		{
			Name: "netlink-non-route-denied", Group: GroupKernel, Expect: Deny, run: probeNetlink,
			Summary: "socket(2) of netlink protocols other than NETLINK_ROUTE, each closed at once",
		},
		{
			Name: "mknod-block-denied", Group: GroupKernel, Expect: Deny, run: probeMknod,
			Summary: "mknod(2) of a block device in a temporary directory, removed at once",
		},
		sysProbe("chroot-denied", "/", "chroot(2) to the current root (a no-op)", func() error { return unix.Chroot("/") }),
	}
}

// sysProbe builds a kernel probe from one call; reached are the errnos that
// show the call passed its permission checks.
func sysProbe(name, target, summary string, call func() error, reached ...unix.Errno) Probe {
	return Probe{Name: name, Group: GroupKernel, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		d, o := decideSyscall(call(), reached...)
		return outcome{target: target, decision: d, observed: o, detail: summary + ": " + o}
	}}
}

func rawSyscall(nr uintptr, a ...uintptr) (uintptr, error) {
	var x [6]uintptr
	copy(x[:], a)
	r, _, en := unix.Syscall6(nr, x[0], x[1], x[2], x[3], x[4], x[5])
	if en != 0 {
		return r, en
	}
	return r, nil
}

// closeOnSuccess closes the fd a successful call returned.
func closeOnSuccess(fd uintptr, err error) error {
	if err == nil {
		unix.Close(int(fd))
	}
	return err
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
// nothing; the thread is locked so that only it is involved.
func callSetns() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errors.Join(errors.New("open own netns"), err)
	}
	defer unix.Close(fd)
	return unix.Setns(fd, unix.CLONE_NEWNET)
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

// cloneProbe starts a child in a new namespace whose exec must fail with
// ENOENT: an ENOENT proves the clone succeeded; a clone refusal comes back as
// the clone's own errno. The child never runs any code of its own.
func cloneProbe(name string, flag uintptr, what string) Probe {
	summary := "clone(2) of " + what
	return Probe{Name: name, Group: GroupKernel, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		err := cloneExecMissing(flag)
		d, o := decideSyscall(err, unix.ENOENT)
		if d == Allow {
			o = "created"
		}
		return outcome{target: what, decision: d, observed: o, detail: summary + ": " + errnoName(err)}
	}}
}

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

// sockProbe opens a socket and closes it: needs CAP_NET_RAW for raw kinds.
func sockProbe(name string, domain, typ, proto int, what string) Probe {
	summary := "socket(2) of an " + what
	return Probe{Name: name, Group: GroupKernel, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
		err = closeOnSuccess(uintptr(fd), err)
		d, o := decideSyscall(err)
		if errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.EPROTONOSUPPORT) {
			d = Deny
		}
		return outcome{target: what, decision: d, observed: o, detail: summary + ": " + o}
	}}
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

func probeMknod(*Env) outcome {
	const target = "block device 7:0"
	dir, err := os.MkdirTemp("", "agentbox-probe-")
	if err != nil {
		return outcome{target: target, decision: Unknown, observed: "no-writable-dir", detail: "no temporary directory: " + err.Error()}
	}
	defer os.RemoveAll(dir)
	node := filepath.Join(dir, "blk")
	err = unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0)))
	if err == nil {
		os.Remove(node)
	}
	d, o := decideSyscall(err)
	if d == Allow {
		o = "created"
	}
	return outcome{target: target, decision: d, observed: o, detail: "mknod(2) of a block device in " + dir + ": " + errnoName(err)}
}
