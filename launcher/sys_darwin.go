package launcher

import (
	"errors"
	"syscall"
)

// statTimes are a stat's modification and change times.
func statTimes(st *syscall.Stat_t) (mtim, ctim syscall.Timespec) {
	return st.Mtimespec, st.Ctimespec
}

// plantWorkspaceSocket refuses on darwin, which has no O_PATH and no
// /proc/self/fd to bind the canary through an fd of the workspace.
func (p *prepared) plantWorkspaceSocket() error {
	return errors.New("workspace socket canary: binding it through an fd of the workspace needs Linux's /proc/self/fd")
}

// socketCloexec is 0 on darwin, which has no SOCK_CLOEXEC; the one caller
// (gVisor's bridge dialer) is never reached there, runsc being Linux's.
const socketCloexec = 0
