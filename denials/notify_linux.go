package denials

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// receive takes the next notification off fd. ENOENT: the caller was gone
// (killed, or interrupted by a signal) before it was read.
func receive(fd int) (seccompNotif, error) {
	var n seccompNotif // the kernel wants it zeroed
	err := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n))
	return n, err
}

// refuse answers the notification id with EPERM. ENOENT means the caller
// no longer waits for an answer: interrupted by a signal (the kernel
// restarts the call, which notifies again) or killed.
func refuse(fd int, id uint64) error {
	resp := seccompNotifResp{ID: id, Error: -int32(unix.EPERM)}
	return ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// stillWaiting reports whether notification id is still pending, that is
// whether the caller's pid still names the caller.
func stillWaiting(fd int, id uint64) bool {
	return ioctl(fd, ioctlNotifIDValid, unsafe.Pointer(&id)) == nil
}

// ioctlNotifIDValid is SECCOMP_IOCTL_NOTIF_ID_VALID, _IOW('!', 2, __u64).
const ioctlNotifIDValid = 0x40082102
