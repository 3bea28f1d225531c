//go:build linux

package main

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// loadSeccomp loads filter (struct sock_filter array, native byte order)
// on the calling thread, which becomeAgent locked, with no_new_privs: the
// program this thread executes next, and everything it starts, runs under
// it. With TSYNC every thread of the process gets it, so that the exec,
// whichever thread the runtime had it on, is filtered. A nil filter loads
// none: an OCI runtime installed the plan's already.
func loadSeccomp(filter []byte) error {
	if len(filter) == 0 {
		return nil
	}
	const insn = int(unsafe.Sizeof(unix.SockFilter{}))
	if len(filter)%insn != 0 {
		return fmt.Errorf("seccomp filter of %d bytes is not a whole number of %d-byte instructions", len(filter), insn)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter) / insn), Filter: (*unix.SockFilter)(unsafe.Pointer(&filter[0]))}
	_, _, en := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if en != 0 {
		return fmt.Errorf("load the seccomp filter (%d instructions): %w", prog.Len, en)
	}
	return nil
}
