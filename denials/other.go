//go:build !linux

package denials

import "errors"

// errNotLinux is the answer off Linux: seccomp, its user notification and
// the syscall numbers the summaries name are Linux's.
var errNotLinux = errors.New("the denial log needs Linux seccomp user notification; on macOS agentbox runs the agent as a dedicated account (--isolation user), under a Seatbelt profile that logs no denial to agentbox")

// table is empty off Linux: there is no Linux syscall number to name.
var table = map[string]syscall{}

// KernelSupport says that this host has no seccomp user notification.
func KernelSupport() error { return errNotLinux }

func receive(int) (seccompNotif, error) { return seccompNotif{}, errNotLinux }

func refuse(int, uint64) error { return errNotLinux }

// cloneFlags and ptraceRequests are empty off Linux, as table is.
var (
	cloneFlags     []flag
	ptraceRequests = map[uint64]string{}
)
