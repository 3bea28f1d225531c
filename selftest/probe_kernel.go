package selftest

import (
	"errors"
	"os"
	"path/filepath"

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
		sharing(changing(mountTable), sysProbe("mount-tmpfs-denied", "/", "mount(2) of a tmpfs with an invalid option", callMount, unix.EINVAL)),
		sysProbe("fsopen-denied", "tmpfs", "fsopen(2) of a tmpfs context (new mount API)", callFsopen),
		sharing(changing(mountTable), sysProbe("umount-denied", "/proc/self/fdinfo", "umount2(2) of a directory that is no mount point", callUmount, unix.EINVAL)),
		sysProbe("pivot-root-denied", "NULL", "pivot_root(2) with NULL paths", callPivotRoot, unix.EFAULT),
		cloneProbe("unshare-user-denied", cloneNewUser, "a child in a new user namespace"),
		cloneProbe("unshare-mount-denied", cloneNewNS, "a child in a new mount namespace"),
		cloneProbe("unshare-net-denied", cloneNewNet, "a child in a new network namespace"),
		sysProbe("setns-denied", "/proc/thread-self/ns/net", "setns(2) into the probe's own network namespace (a no-op)", callSetns),
		sysProbe("keyctl-denied", "thread keyring", "keyctl(2) lookup of the thread keyring without creating it", callKeyctl, errNoKey),
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
			Name: "ptrace-pid1-denied", Group: GroupKernel, Expect: Deny, run: probePtrace, shares: changing(traceTarget),
			Summary: "ptrace(2) PTRACE_SEIZE of PID 1, detached at once",
		},
		{
			Name: "process-vm-readv-pid1-denied", Group: GroupKernel, Expect: Deny, run: probeProcessVMReadv,
			Summary: "process_vm_readv(2) of an unmapped address of PID 1",
		},
		sockProbe("packet-socket-denied", afPacket, unix.SOCK_RAW, 0, "AF_PACKET raw socket"),
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
		{
			Name: "kernel-as-planned", Group: GroupKernel, Expect: Deny, run: probeKernel,
			Summary: "uname(2) and the Landlock ABI query name the kernel the plan chose: the host's, or gVisor's Sentry (see gvisor.go)",
		},
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

// sharing sets p's shares.
func sharing(shares func(*Env) (resource, resource), p Probe) Probe {
	p.shares = shares
	return p
}

// closeOnSuccess closes the fd a successful call returned.
func closeOnSuccess(fd uintptr, err error) error {
	if err == nil {
		unix.Close(int(fd))
	}
	return err
}

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

// sockProbe opens a socket and closes it: needs CAP_NET_RAW for raw kinds.
func sockProbe(name string, domain, typ, proto int, what string) Probe {
	summary := "socket(2) of an " + what
	return Probe{Name: name, Group: GroupKernel, Expect: Deny, Summary: summary, run: func(*Env) outcome {
		fd, err := socket(domain, typ, proto)
		err = closeOnSuccess(uintptr(fd), err)
		d, o := decideSyscall(err)
		if errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.EPROTONOSUPPORT) {
			d = Deny
		}
		return outcome{target: what, decision: d, observed: o, detail: summary + ": " + o}
	}}
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
