package profiles

import (
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Logged is the part of a profile's denials whose every attempt a
// supervisor records: instead of the default action's EPERM, these
// syscalls meet SCMP_ACT_NOTIFY in the filter LoggedOCI renders, and the
// launcher's listener (package denials) writes down who tried what, then
// answers EPERM. It never lets one through, and the kernel answers ENOSYS
// when no listener is left, so the call fails either way.
type Logged struct {
	// Names are the syscalls, each one of the profile's denials.
	Names []string
	// MinKernel is the first Linux release with SECCOMP_RET_USER_NOTIF.
	MinKernel Version
	// Reason says why these and no others.
	Reason string
}

// logged is agentbox's list: the denials an agent has no business with
// and that say something when it tries them (an escape attempt, a prompt
// injection at work). Left out: clone3, which must answer ENOSYS so that
// libc falls back to clone; the calls Docker gates behind a capability and
// the obsolete ones, which ordinary programs probe for and whose attempts
// would bury the rest.
func logged() Logged {
	return Logged{
		Names: []string{
			"mount", "umount2", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
			"mount_setattr", "pivot_root", "chroot",
			"ptrace", "process_vm_readv", "process_vm_writev",
			"bpf", "keyctl", "add_key", "request_key",
			"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
			"unshare", "setns", "perf_event_open", "userfaultfd",
			"io_uring_setup", "io_uring_enter", "io_uring_register",
		},
		MinKernel: Version{5, 0, 0},
		Reason: "Every attempt of these is evidence: mounting, namespaces, tracing, kernel modules, keys, " +
			"BPF, perf, userfaultfd and io_uring have no use in an agent's work, and the run record " +
			"should say who tried them. The listener answers EPERM, the same as the default action.",
	}
}

// LoggedSyscalls returns, sorted, the syscalls of agentbox's default
// profile whose attempts the launcher records (Logged).
func LoggedSyscalls() []string {
	return slices.Sorted(slices.Values(Default().Logged.Names))
}

// LoggedOCI is OCI with one more rule, last: the Logged syscalls answer
// SCMP_ACT_NOTIFY, and listener, the unix socket the runtime hands the
// notification fd to (linux.seccomp.listenerPath), is set. The syscalls
// are refused by the default action of OCI's form; this one only adds the
// record. A runtime that cannot send the fd must get OCI instead.
func (p Profile) LoggedOCI(arch specs.Arch, listener string) *specs.LinuxSeccomp {
	out := p.OCI(arch)
	if len(p.Logged.Names) == 0 {
		return out
	}
	out.Syscalls = append(out.Syscalls, specs.LinuxSyscall{
		Names:  slices.Sorted(slices.Values(p.Logged.Names)),
		Action: specs.ActNotify,
	})
	out.ListenerPath = listener
	return out
}
