package selftest

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

var errNoThreadName = errors.New("no thread names")

func setThreadName(name string) error {
	b, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(b)), 0, 0, 0)
}

func threadName() (string, error) {
	var b [16]byte
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0); err != nil {
		return "", err
	}
	return unix.ByteSliceToString(b[:]), nil
}
