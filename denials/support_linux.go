package denials

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompGetActionAvail is SECCOMP_GET_ACTION_AVAIL (linux/seccomp.h).
const seccompGetActionAvail = 2

// KernelSupport returns nil when this kernel has seccomp user
// notification (SECCOMP_RET_USER_NOTIF, Linux 5.0), else why not.
func KernelSupport() error {
	action := uint32(unix.SECCOMP_RET_USER_NOTIF)
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, seccompGetActionAvail, 0, uintptr(unsafe.Pointer(&action)))
	if e != 0 {
		return fmt.Errorf("this kernel has no seccomp user notification (SECCOMP_RET_USER_NOTIF needs Linux 5.0): %w", e)
	}
	return nil
}
