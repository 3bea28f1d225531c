package launcher

import "syscall"

// statTimes are a stat's modification and change times.
func statTimes(st *syscall.Stat_t) (mtim, ctim syscall.Timespec) { return st.Mtim, st.Ctim }

// socketCloexec makes a socket close-on-exec as it is made.
const socketCloexec = syscall.SOCK_CLOEXEC
