package profiles

import specs "github.com/opencontainers/runtime-spec/specs-go"

// Values from the Linux UAPI headers (linux/sched.h, bits/socket.h,
// bits/socket_type.h, asm-generic/errno*.h, linux/personality.h). They are
// spelled out here so that this package builds on every OS; a Linux-only
// test compares them with golang.org/x/sys/unix.
const (
	cloneNewNS     = 0x00020000
	cloneNewCgroup = 0x02000000
	cloneNewUTS    = 0x04000000
	cloneNewIPC    = 0x08000000
	cloneNewUser   = 0x10000000
	cloneNewPID    = 0x20000000
	cloneNewNet    = 0x40000000
	// cloneNewNamespaces is every CLONE_NEW* flag clone(2) accepts.
	// CLONE_NEWTIME (0x80) is missing on purpose: in clone(2) that bit is
	// part of the exit signal (CSIGNAL), so only unshare and clone3 can
	// create a time namespace, and both are refused outright.
	cloneNewNamespaces = cloneNewNS | cloneNewCgroup | cloneNewUTS | cloneNewIPC |
		cloneNewUser | cloneNewPID | cloneNewNet

	afUnix    = 1
	afInet    = 2
	afInet6   = 10
	afNetlink = 16
	afPacket  = 17

	// Netlink protocols (linux/netlink.h): the one allowed and the ones the
	// tests and DeniedCalls name.
	netlinkRoute         = 0
	netlinkSockDiag      = 4
	netlinkAudit         = 9
	netlinkKobjectUevent = 15

	sockStream    = 1
	sockDgram     = 2
	sockRaw       = 3
	sockSeqpacket = 5
	sockPacket    = 10
	// sockTypeMask selects the socket type from socket(2)'s type argument,
	// leaving out SOCK_NONBLOCK and SOCK_CLOEXEC.
	sockTypeMask = 0xf

	errnoEPERM  = 1
	errnoENOSYS = 38

	perLinux         = 0x0000
	perLinux32       = 0x0008
	perUname26       = 0x0020000
	perQuery         = 0xffffffff
	readImpliesExec  = 0x0400000
	personalityOfBSD = 0x0006
)

// Default returns agentbox's profile: an allowlist with EPERM as the default.
func Default() Profile {
	var rules []Rule
	rules = append(rules, fileRules()...)
	rules = append(rules, memoryRules()...)
	rules = append(rules, processRules()...)
	rules = append(rules, eventRules()...)
	rules = append(rules, networkRules()...)
	rules = append(rules, newerRules()...)
	rules = append(rules, personalityRules()...)
	return Profile{
		Name:            "agentbox",
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: errnoEPERM,
		Rules:           rules,
		Denied:          denials(),
		DeniedCalls:     deniedCalls(),
		Logged:          logged(),
	}
}

var (
	amd64Only = []specs.Arch{specs.ArchX86_64}
	v2_6      = Version{2, 6, 0}
)

func allow(reason string, kernel Version, names ...string) Rule {
	return Rule{Names: names, Action: specs.ActAllow, MinKernel: kernel, Reason: reason}
}

func fileRules() []Rule {
	return []Rule{
		allow("I/O on file descriptors the agent already holds. ioctl stays open because terminals, "+
			"editors and language runtimes need it; what a device ioctl can reach is decided by the minimal /dev.",
			Version{2, 6, 39},
			"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "lseek",
			"close", "dup", "dup3", "fcntl", "flock", "fsync", "fdatasync", "sync", "syncfs",
			"sync_file_range", "ftruncate", "truncate", "fallocate", "fadvise64", "readahead",
			"sendfile", "splice", "tee", "vmsplice", "ioctl"),
		allow("Path operations of the *at family. Which paths exist and which are writable is decided by "+
			"the mount layout (read-only root, workspace bind), not by seccomp. mknodat can only create "+
			"FIFOs and sockets: device nodes need CAP_MKNOD, which the sandbox lacks.",
			Version{2, 6, 22},
			"openat", "newfstatat", "fstat", "fstatfs", "statfs", "getdents64", "getcwd", "chdir",
			"fchdir", "mkdirat", "mknodat", "unlinkat", "renameat", "linkat", "symlinkat",
			"readlinkat", "fchmod", "fchmodat", "fchown", "fchownat", "faccessat", "utimensat", "umask"),
		allow("Extended attributes: package managers, git and tar read and write them on files the agent may touch.",
			v2_6,
			"getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr", "listxattr",
			"llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr"),
		allow("renameat2: atomic rename and RENAME_NOREPLACE, used by editors and package managers.",
			Version{3, 15, 0}, "renameat2"),
		allow("copy_file_range: in-kernel file copy, used by coreutils cp and language runtimes.",
			Version{4, 5, 0}, "copy_file_range"),
		allow("preadv2 and pwritev2: vectored I/O with per-call flags.",
			Version{4, 6, 0}, "preadv2", "pwritev2"),
		allow("statx: the stat call current glibc, Rust and Go use.", Version{4, 11, 0}, "statx"),
		allow("openat2: open with RESOLVE_* flags, used by hardened path resolution.", Version{5, 6, 0}, "openat2"),
		allow("faccessat2: access checks with flags, used by glibc's faccessat.", Version{5, 8, 0}, "faccessat2"),
		allow("close_range: closes inherited descriptors before exec, used by glibc, Python and systemd tools.",
			Version{5, 9, 0}, "close_range"),
		{
			Names: []string{
				"open", "creat", "stat", "lstat", "access", "mkdir", "rmdir", "rename", "link", "unlink",
				"symlink", "readlink", "chmod", "chown", "lchown", "mknod", "utime", "utimes",
				"futimesat", "getdents", "pipe", "dup2", "poll", "select", "epoll_create",
				"epoll_wait", "eventfd", "signalfd", "inotify_init", "pause", "alarm", "time",
				"fork", "vfork", "getpgrp",
			},
			Action:    specs.ActAllow,
			Arches:    amd64Only,
			MinKernel: Version{2, 6, 22},
			Reason: "Legacy entry points that x86_64 still has and arm64 never had (there libc uses the *at " +
				"and *2 forms above). Static binaries and older libcs call them directly.",
		},
	}
}

func memoryRules() []Rule {
	return []Rule{
		allow("Memory management of the agent's own address space.", v2_6,
			"brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "mincore", "msync", "mlock",
			"munlock", "mlockall", "munlockall", "remap_file_pages"),
		allow("memfd_create: anonymous files, used by JIT compilers, Wayland/X clients and sandboxes.",
			Version{3, 17, 0}, "memfd_create"),
		allow("membarrier and mlock2: used by language runtimes (JVM, .NET, Go) and crypto libraries.",
			Version{4, 4, 0}, "membarrier", "mlock2"),
		allow("Memory protection keys, used by some allocators and runtimes.",
			Version{4, 9, 0}, "pkey_alloc", "pkey_free", "pkey_mprotect"),
		allow("memfd_secret: memory hidden even from the kernel's direct map; it only narrows access.",
			Version{5, 14, 0}, "memfd_secret"),
		allow("process_mrelease: frees the memory of a process the caller has already killed through a pidfd.",
			Version{5, 15, 0}, "process_mrelease"),
	}
}

func processRules() []Rule {
	return []Rule{
		allow("Process and thread lifecycle inside the sandbox's own PID namespace; signals reach only "+
			"processes of the sandbox. execve is how the agent runs tools at all.",
			v2_6,
			"execve", "exit", "exit_group", "wait4", "waitid", "kill", "tkill", "tgkill",
			"set_tid_address", "set_robust_list", "get_robust_list", "futex", "restart_syscall",
			"getpid", "getppid", "gettid", "getpgid", "setpgid", "getsid", "setsid", "prctl",
			"getrusage", "getrlimit", "setrlimit", "prlimit64", "getpriority", "setpriority",
			"ioprio_get", "ioprio_set", "times", "sysinfo", "uname", "getcpu"),
		allow("Identity: reading ids, and changing them only within what the user namespace maps "+
			"(without capabilities set*id cannot gain anything). capset can only drop.",
			v2_6,
			"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
			"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
			"setfsuid", "setfsgid", "capget", "capset"),
		allow("Scheduling of the agent's own threads.", Version{3, 14, 0},
			"sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam",
			"sched_setparam", "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
			"sched_get_priority_min", "sched_rr_get_interval", "sched_getattr", "sched_setattr"),
		allow("Signal handling: every runtime installs handlers and masks signals; rt_tgsigqueueinfo needs 2.6.31.", Version{2, 6, 31},
			"rt_sigaction", "rt_sigprocmask", "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait",
			"rt_sigqueueinfo", "rt_tgsigqueueinfo", "rt_sigreturn", "sigaltstack"),
		allow("Clocks and timers. adjtimex and clock_adjtime only read the clock without CAP_SYS_TIME.",
			Version{2, 6, 39},
			"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday",
			"getitimer", "setitimer", "timer_create", "timer_delete", "timer_getoverrun",
			"timer_gettime", "timer_settime", "adjtimex", "clock_adjtime"),
		{
			Names:     []string{"arch_prctl", "set_thread_area", "get_thread_area"},
			Action:    specs.ActAllow,
			Arches:    amd64Only,
			MinKernel: v2_6,
			Reason:    "Thread-local storage setup on x86_64; every threaded program needs arch_prctl.",
		},
		allow("execveat: exec through a descriptor (fexecve), used by glibc and container tools.",
			Version{3, 19, 0}, "execveat"),
		allow("getrandom: the kernel CSPRNG, used by every TLS library.", Version{3, 17, 0}, "getrandom"),
		allow("seccomp: lets the agent's tools narrow their own filter further (browsers, sandboxes); "+
			"filters stack, so this can only remove permissions.", Version{3, 17, 0}, "seccomp"),
		allow("rseq: restartable sequences, registered by glibc 2.35+ for every thread.",
			Version{4, 18, 0}, "rseq"),
		allow("pidfd_send_signal: signal a process through a pidfd without pid-reuse races.",
			Version{5, 1, 0}, "pidfd_send_signal"),
		allow("pidfd_open: used by Go, Python and systemd tools to wait for children.",
			Version{5, 3, 0}, "pidfd_open"),
		allow("Landlock: lets tools sandbox themselves further; it can only remove access.",
			Version{5, 13, 0}, "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"),
		allow("futex_waitv: waiting on several futexes, used by Wine/Proton-style runtimes and newer libcs.",
			Version{5, 16, 0}, "futex_waitv"),
		{
			Names:  []string{"clone"},
			Action: specs.ActAllow,
			Args: []specs.LinuxSeccompArg{{
				Index: 0, Value: cloneNewNamespaces, ValueTwo: 0, Op: specs.OpMaskedEqual,
			}},
			MinKernel: v2_6,
			Reason: "fork, vfork and thread creation go through clone; allowed only when flags & CLONE_NEW* == 0, " +
				"so no new namespace (above all no user namespace, which would hand out capabilities) can be made. " +
				"The flags are argument 0 on both x86_64 and arm64.",
		},
		{
			Names:     []string{"clone3"},
			Action:    specs.ActErrno,
			ErrnoRet:  errnoENOSYS,
			MinKernel: Version{5, 3, 0},
			Reason: "clone3 takes its flags in a struct that seccomp cannot read, so it cannot be filtered like clone. " +
				"ENOSYS (not EPERM) makes glibc, musl and Go fall back to clone.",
		},
	}
}

func eventRules() []Rule {
	return []Rule{
		allow("Event loops: epoll, poll, select, eventfd, signalfd, timerfd, pipes and inotify/fanotify marks "+
			"(fanotify_init itself needs CAP_SYS_ADMIN and stays refused).",
			Version{2, 6, 36},
			"epoll_create1", "epoll_ctl", "epoll_pwait", "ppoll", "pselect6", "eventfd2", "signalfd4",
			"timerfd_create", "timerfd_settime", "timerfd_gettime", "pipe2", "inotify_init1",
			"inotify_add_watch", "inotify_rm_watch", "fanotify_mark"),
		allow("Linux AIO (io_setup and friends), used by databases and some runtimes. Unlike io_uring it "+
			"offers no way around this filter.",
			v2_6, "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents"),
		allow("io_pgetevents: AIO completion with a signal mask.", Version{4, 18, 0}, "io_pgetevents"),
		allow("epoll_pwait2: epoll with a nanosecond timeout, used by libuv and Go.", Version{5, 11, 0}, "epoll_pwait2"),
		allow("System V and POSIX IPC, confined to the sandbox's own IPC namespace.", v2_6,
			"msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
			"shmget", "shmat", "shmdt", "shmctl", "mq_open", "mq_unlink", "mq_timedsend",
			"mq_timedreceive", "mq_notify", "mq_getsetattr"),
	}
}

func networkRules() []Rule {
	rules := []Rule{
		allow("Socket operations on sockets the agent could create; what they reach is decided by the "+
			"network namespace (loopback and the gateway only).",
			Version{3, 0, 0},
			"bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername",
			"getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg",
			"recvmmsg", "shutdown", "socketpair"),
	}
	for _, domain := range []struct {
		name  string
		value uint64
	}{{"AF_UNIX", afUnix}, {"AF_INET", afInet}, {"AF_INET6", afInet6}} {
		for _, typ := range []struct {
			name  string
			value uint64
		}{{"SOCK_STREAM", sockStream}, {"SOCK_DGRAM", sockDgram}, {"SOCK_SEQPACKET", sockSeqpacket}} {
			rules = append(rules, socketRule(domain.value, typ.value,
				"socket("+domain.name+", "+typ.name+"): an allowed domain with a non-raw type."))
		}
	}
	for _, typ := range []struct {
		name  string
		value uint64
	}{{"SOCK_RAW", sockRaw}, {"SOCK_DGRAM", sockDgram}} {
		rules = append(rules, netlinkRouteRule(typ.value, typ.name))
	}
	return rules
}

// socketRule allows socket(domain, type) for one domain and one socket type.
// The domain is compared in full (64 bits), so an upper-half bit set by the
// caller cannot smuggle AF_PACKET past a != test; the type is masked with
// 0xf so that SOCK_NONBLOCK and SOCK_CLOEXEC are accepted.
func socketRule(domain, typ uint64, reason string) Rule {
	return Rule{
		Names:  []string{"socket"},
		Action: specs.ActAllow,
		Args: []specs.LinuxSeccompArg{
			{Index: 0, Value: domain, Op: specs.OpEqualTo},
			{Index: 1, Value: sockTypeMask, ValueTwo: typ, Op: specs.OpMaskedEqual},
		},
		MinKernel: v2_6,
		Reason: reason + " Everything else (AF_PACKET, SOCK_RAW, SOCK_PACKET, AF_VSOCK, AF_ALG, ...) " +
			"is refused: an agent needs neither packet capture, raw IP nor host-guest channels.",
	}
}

// netlinkRouteRule allows socket(AF_NETLINK, typ, NETLINK_ROUTE) and no
// other netlink protocol. libseccomp compares each argument on its own, so
// "AF_NETLINK only with NETLINK_ROUTE" is an allow rule with three
// conditions (domain, type and protocol) while the other domains have rules
// of their own; a netlink socket matching none of these falls to the
// default action. The protocol is compared in full (64 bits): the kernel
// reads it as an int, so a caller setting upper bits can only make the
// filter refuse a call the kernel would have taken as NETLINK_ROUTE.
func netlinkRouteRule(typ uint64, typName string) Rule {
	return Rule{
		Names:  []string{"socket"},
		Action: specs.ActAllow,
		Args: []specs.LinuxSeccompArg{
			{Index: 0, Value: afNetlink, Op: specs.OpEqualTo},
			{Index: 1, Value: sockTypeMask, ValueTwo: typ, Op: specs.OpMaskedEqual},
			{Index: 2, Value: netlinkRoute, Op: specs.OpEqualTo},
		},
		MinKernel: v2_6,
		Reason: "socket(AF_NETLINK, " + typName + ", NETLINK_ROUTE): glibc's getaddrinfo and getifaddrs, Go's net " +
			"package and libuv ask rtnetlink for the interfaces and addresses; it is namespaced and its writes need " +
			"CAP_NET_ADMIN. Every other netlink protocol (NETLINK_AUDIT, NETLINK_KOBJECT_UEVENT, NETLINK_SOCK_DIAG, " +
			"NETLINK_NETFILTER, NETLINK_XFRM, NETLINK_GENERIC, ...) is refused: each reaches a kernel subsystem an " +
			"agent needs none of (the audit log and device events are host-wide, nf_tables and xfrm have a long " +
			"record of privilege escalations).",
	}
}

func newerRules() []Rule {
	return []Rule{
		{
			Names: []string{"cachestat"}, Action: specs.ActAllow,
			MinKernel: Version{6, 5, 0}, MinLibseccomp: Version{2, 5, 5},
			Reason: "cachestat: page-cache statistics for a file the agent has open.",
		},
		{
			Names: []string{"fchmodat2", "map_shadow_stack"}, Action: specs.ActAllow,
			MinKernel: Version{6, 6, 0}, MinLibseccomp: Version{2, 5, 5},
			Reason: "fchmodat2 (glibc 2.39 uses it for lchmod) and map_shadow_stack (x86 CET shadow stacks " +
				"set up by glibc for hardened binaries).",
		},
		{
			Names: []string{"futex_wake", "futex_wait", "futex_requeue"}, Action: specs.ActAllow,
			MinKernel: Version{6, 7, 0}, MinLibseccomp: Version{2, 5, 5},
			Reason: "futex2 operations, the successors of futex.",
		},
		{
			Names: []string{"statmount", "listmount"}, Action: specs.ActAllow,
			MinKernel: Version{6, 8, 0}, MinLibseccomp: Version{2, 6, 0},
			Reason: "Read-only queries of the sandbox's own mount table, the same facts as /proc/self/mountinfo.",
		},
		{
			Names: []string{"mseal"}, Action: specs.ActAllow,
			MinKernel: Version{6, 10, 0}, MinLibseccomp: Version{2, 6, 0},
			Reason: "mseal: seals the agent's own mappings; glibc and browsers use it to harden themselves.",
		},
		{
			Names: []string{"uretprobe"}, Action: specs.ActAllow, Arches: amd64Only,
			MinKernel: Version{6, 11, 0}, MinLibseccomp: Version{2, 6, 0},
			Reason: "uretprobe is called only by the kernel's uprobe trampoline; refusing it kills a traced " +
				"process. It exists on x86_64 only.",
		},
		{
			Names:     []string{"getxattrat", "setxattrat", "listxattrat", "removexattrat"},
			Action:    specs.ActAllow,
			MinKernel: Version{6, 13, 0}, MinLibseccomp: Version{2, 6, 0},
			Reason: "The *at forms of the extended-attribute calls allowed above.",
		},
	}
}

// personalityRules allows the personality values Docker allows: the query
// (0xffffffff), plain Linux, PER_LINUX32 and UNAME26. READ_IMPLIES_EXEC,
// ADDR_NO_RANDOMIZE and the foreign personalities stay refused.
func personalityRules() []Rule {
	var rules []Rule
	for _, v := range []struct {
		value  uint64
		reason string
	}{
		{perLinux, "personality(PER_LINUX): resetting to the default personality."},
		{perLinux32, "personality(PER_LINUX32): uname reports a 32-bit machine (linux32, build tools)."},
		{perUname26, "personality(UNAME26): uname reports 2.6.x for old software."},
		{perLinux32 | perUname26, "personality(PER_LINUX32|UNAME26): both of the above."},
		{perQuery, "personality(0xffffffff): queries the current personality without changing it."},
	} {
		rules = append(rules, Rule{
			Names:     []string{"personality"},
			Action:    specs.ActAllow,
			Args:      []specs.LinuxSeccompArg{{Index: 0, Value: v.value, Op: specs.OpEqualTo}},
			MinKernel: v2_6,
			Reason:    v.reason + " Other personalities (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, foreign ABIs) stay refused.",
		})
	}
	return rules
}
