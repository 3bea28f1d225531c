// Package denials keeps a run's denial log: every call of a syscall an
// agent has no business with (mounting, namespaces, ptrace, kernel modules,
// bpf, keys, perf, userfaultfd, io_uring: seccomp/profiles.LoggedSyscalls)
// is recorded, with the caller's pid, command name and a summary of the
// arguments, and refused.
//
// The mechanism is seccomp user notification. The sandbox's filter answers
// those syscalls with SCMP_ACT_NOTIFY instead of EPERM
// (profiles.Profile.LoggedOCI); the OCI runtime hands the filter's
// notification fd to the unix socket named by linux.seccomp.listenerPath,
// with the container's state, as SCM_RIGHTS; a Listener receives it, reads
// each notification, writes the denial down and answers EPERM. It never
// answers SECCOMP_USER_NOTIF_FLAG_CONTINUE: the call fails exactly as the
// plain filter would make it fail. Every other syscall stays a verdict of
// the filter in the kernel, with no round trip to this process.
//
// What the agent sees when the listener is gone: the kernel answers ENOSYS
// to a notifying call once no process holds the notification fd (the
// launcher died or closed it), so the call still fails, unlogged, and never
// waits. While the listener lives, a call waits only for the listener to
// read /proc/PID/comm and the argument strings from /proc/PID/mem (at most
// a few hundred bytes, pages the caller itself just passed; userfaultfd,
// the one way to make such a read stall, is itself refused).
//
// The strings a summary holds are read after the call was made and are
// the caller's to choose: they are evidence of what it asked, not of what
// the kernel would have done. SECCOMP_IOCTL_NOTIF_ID_VALID after the reads
// makes sure they came from the caller and not from a process that reused
// its pid; a summary whose reads failed shows the raw numbers.
//
// Landlock's refusals are not the listener's: from ABI 7 the kernel sends
// them to the audit subsystem, and a LandlockWatch reads a copy of every
// audit record from the read-only multicast group (it never changes the
// kernel's audit settings) and keeps the records of the domains the run's
// agent created (landlock.go, docs/denials.md).
package denials
