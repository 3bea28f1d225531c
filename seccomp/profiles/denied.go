package profiles

// denials lists what agentbox refuses on purpose. No rule of Default may name
// any of these (a test checks it); the default action refuses them.
func denials() []Denial {
	return []Denial{
		{
			Names: []string{
				"mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
				"open_tree", "open_tree_attr", "mount_setattr", "pivot_root", "chroot",
			},
			Reason: "Mounting, the new mount API and root changes: the mount layout is the filesystem " +
				"boundary, and inside a user namespace these calls are the usual first step of an escape.",
		},
		{
			Names: []string{"unshare", "setns", "clone3"},
			Reason: "New or foreign namespaces: a new user namespace hands out a full capability set over " +
				"it and a much larger kernel surface. clone3 answers ENOSYS (its flags cannot be filtered); " +
				"clone is allowed only without CLONE_NEW* flags.",
		},
		{
			Names: []string{
				"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
				"process_madvise",
			},
			Reason: "Tracing and cross-process memory access: an agent has no business reading or " +
				"steering other processes, even inside the sandbox, and ptrace has a history of " +
				"seccomp bypasses.",
		},
		{
			Names: []string{
				"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
				"create_module", "query_module", "get_kernel_syms", "reboot",
			},
			Reason: "Loading kernels and kernel modules, rebooting.",
		},
		{
			Names: []string{"keyctl", "add_key", "request_key"},
			Reason: "The kernel key retention service is not namespaced: keys of the host user could be " +
				"reached.",
		},
		{
			Names: []string{"bpf", "perf_event_open", "lookup_dcookie", "syslog"},
			Reason: "BPF programs, perf events and the kernel log: large attack surface and host-wide " +
				"information.",
		},
		{
			Names: []string{"userfaultfd"},
			Reason: "userfaultfd lets a process stall the kernel on a page fault, the standard tool for " +
				"winning kernel race conditions.",
		},
		{
			Names: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
			Reason: "io_uring performs I/O without issuing the syscalls this filter inspects, and has " +
				"been the source of many kernel privilege escalations.",
		},
		{
			Names: []string{"open_by_handle_at", "name_to_handle_at"},
			Reason: "File handles bypass path resolution; open_by_handle_at caused the 'shocker' container " +
				"breakout, and name_to_handle_at only prepares it.",
		},
		{
			Names: []string{"modify_ldt", "iopl", "ioperm", "vm86", "vm86old"},
			Reason: "x86 descriptor tables, I/O port access and virtual 8086 mode: only 16-bit and DOS " +
				"emulation need them, and they carry a history of kernel bugs.",
		},
		{
			Names: []string{
				"settimeofday", "clock_settime", "clock_settime64", "stime", "acct", "quotactl",
				"quotactl_fd", "swapon", "swapoff", "sethostname", "setdomainname", "vhangup",
				"fanotify_init", "nfsservctl", "_sysctl", "sysfs", "ustat", "uselib",
			},
			Reason: "Host-wide administration (clock, accounting, quotas, swap, host names, terminals, " +
				"fanotify) and obsolete calls. Docker allows these only with a capability; the sandbox " +
				"holds none.",
		},
		{
			Names: []string{
				"get_mempolicy", "set_mempolicy", "set_mempolicy_home_node", "mbind", "move_pages",
				"migrate_pages",
			},
			Reason: "NUMA placement across the host's memory; Docker gates it behind CAP_SYS_NICE.",
		},
		{
			Names:  []string{"lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules"},
			Reason: "Changing LSM attributes; Docker gates these behind CAP_SYS_ADMIN.",
		},
	}
}

// deniedCalls lists calls the profile refuses although it allows the
// syscall for other arguments. The argument values are the ones that matter;
// the others may hold anything.
func deniedCalls() []Call {
	return []Call{
		{
			Label: "clone(CLONE_NEWUSER)", Name: "clone",
			Args: []ArgValue{{Index: 0, Value: cloneNewUser}},
			Reason: "A new user namespace grants every capability over it; with those the other " +
				"CLONE_NEW* flags follow, so this one call stands for all of them.",
		},
		{
			Label: "socket(AF_PACKET)", Name: "socket",
			Args:   []ArgValue{{Index: 0, Value: afPacket}},
			Reason: "Packet sockets see and forge link-layer traffic.",
		},
		{
			Label: "socket(AF_INET, SOCK_RAW)", Name: "socket",
			Args:   []ArgValue{{Index: 0, Value: afInet}, {Index: 1, Value: sockRaw}},
			Reason: "Raw IP sockets forge packets past the transport layer.",
		},
		{
			Label: "socket(AF_INET6, SOCK_RAW)", Name: "socket",
			Args:   []ArgValue{{Index: 0, Value: afInet6}, {Index: 1, Value: sockRaw}},
			Reason: "Raw IPv6 sockets forge packets past the transport layer.",
		},
		{
			Label: "socket(AF_INET, SOCK_PACKET)", Name: "socket",
			Args:   []ArgValue{{Index: 0, Value: afInet}, {Index: 1, Value: sockPacket}},
			Reason: "SOCK_PACKET is the obsolete spelling of a packet socket.",
		},
		{
			Label: "socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)", Name: "socket",
			Args: []ArgValue{{Index: 0, Value: afNetlink}, {Index: 1, Value: sockRaw}, {Index: 2, Value: netlinkKobjectUevent}},
			Reason: "Netlink protocols other than NETLINK_ROUTE reach the host's device events, the audit " +
				"log, socket diagnostics, netfilter and the generic netlink families; this one stands for all of them.",
		},
		{
			Label: "personality(READ_IMPLIES_EXEC)", Name: "personality",
			Args:   []ArgValue{{Index: 0, Value: readImpliesExec}},
			Reason: "READ_IMPLIES_EXEC makes every readable mapping executable.",
		},
		{
			Label: "personality(PER_BSD)", Name: "personality",
			Args:   []ArgValue{{Index: 0, Value: personalityOfBSD}},
			Reason: "Foreign personalities exercise rarely tested kernel paths.",
		},
	}
}
