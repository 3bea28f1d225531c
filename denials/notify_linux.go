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
