//go:build integration && linux

package selftest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary act as the confined helper process.
const helperEnv = "AGENTBOX_SELFTEST_HELPER"

// helperLimitEnv=1 makes the helper run its probes one at a time.
const helperLimitEnv = "AGENTBOX_SELFTEST_HELPER_SERIAL"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "confine" {
		os.Exit(confinedHelper())
	}
	os.Exit(m.Run())
}

// confinedHelper confines itself as far as a process can without a
// container (lo up in the fresh network namespace its parent made, bounding
// set emptied, uid and gid 65534, no_new_privs, a small seccomp filter), then
// runs every probe with the InitConfig read from stdin and writes JSON lines.
func confinedHelper() int {
	// no_new_privs is set per thread, and seccomp's TSYNC refuses (EACCES)
	// unless the calling thread has it: both steps must run on one thread.
	runtime.LockOSThread()
	var cfg InitConfig
	if err := json.NewDecoder(os.Stdin).Decode(&cfg); err != nil {
		return fail("config", err)
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"lo up", loUp},
		{"drop bounding set", dropBoundingSet},
		{"drop ids", dropIDs},
		{"no_new_privs", func() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }},
		{"seccomp", installSeccomp},
	}
	for _, s := range steps {
		if err := s.fn(); err != nil {
			return fail(s.name, err)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	probes, err := Selected(&cfg)
	if err != nil {
		return fail("config", err)
	}
	limit := Parallelism
	if os.Getenv(helperLimitEnv) == "1" {
		limit = 1
	}
	if err := runProbes(context.Background(), NewEnv(&cfg), probes, limit, func(r Result) error { return enc.Encode(r) }, nil); err != nil {
		return fail("run", err)
	}
	return 0
}

func fail(step string, err error) int {
	fmt.Fprintf(os.Stderr, "confined helper: %s: %v\n", step, err)
	return 3
}

func loUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

func dropBoundingSet() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("cap %d: %w", c, err)
		}
	}
	return nil
}

func dropIDs() error {
	if err := unix.Setgroups(nil); err != nil {
		return err
	}
	if err := unix.Setresgid(65534, 65534, 65534); err != nil {
		return err
	}
	return unix.Setresuid(65534, 65534, 65534)
}

// installSeccomp denies, with EPERM, the calls an unprivileged process may
// otherwise make (keyrings, perf, userfaultfd, io_uring, ptrace,
// process_vm_readv, clone with CLONE_NEWUSER, netlink sockets of a protocol
// other than NETLINK_ROUTE) and clone3 with ENOSYS. Arguments are compared in
// their low 32 bits only: a stand-in, not agentbox's filter.
func installSeccomp() error {
	arch := map[string]uint32{"amd64": 0xc000003e, "arm64": 0xc00000b7}[runtime.GOARCH]
	if arch == 0 {
		return fmt.Errorf("no seccomp arch for %s", runtime.GOARCH)
	}
	const ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
	const allow, errno = 0x7fff0000, 0x00050000
	prog := []unix.SockFilter{{Code: ld, K: 4}, {Code: jeq, Jt: 1, K: arch}, {Code: ret, K: allow}, {Code: ld, K: 0}}
	for _, nr := range []uint32{
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_PERF_EVENT_OPEN,
		unix.SYS_USERFAULTFD, unix.SYS_IO_URING_SETUP, unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV,
	} {
		prog = append(prog, unix.SockFilter{Code: jeq, Jf: 1, K: nr}, unix.SockFilter{Code: ret, K: errno | uint32(unix.EPERM)})
	}
	prog = append(prog,
		unix.SockFilter{Code: jeq, Jf: 6, K: unix.SYS_SOCKET}, unix.SockFilter{Code: ld, K: 16},
		unix.SockFilter{Code: jeq, Jf: 2, K: unix.AF_NETLINK}, unix.SockFilter{Code: ld, K: 32},
		unix.SockFilter{Code: jeq, Jf: 1, K: unix.NETLINK_ROUTE}, unix.SockFilter{Code: ret, K: allow},
		unix.SockFilter{Code: ret, K: errno | uint32(unix.EPERM)})
	prog = append(prog,
		unix.SockFilter{Code: jeq, Jf: 1, K: unix.SYS_CLONE3}, unix.SockFilter{Code: ret, K: errno | uint32(unix.ENOSYS)},
		unix.SockFilter{Code: jeq, Jf: 3, K: unix.SYS_CLONE}, unix.SockFilter{Code: ld, K: 16},
		unix.SockFilter{Code: jset, Jf: 1, K: unix.CLONE_NEWUSER}, unix.SockFilter{Code: ret, K: errno | uint32(unix.EPERM)},
		unix.SockFilter{Code: ret, K: allow})
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	const setModeFilter, flagTsync = 1, 1
	if _, _, en := unix.Syscall(unix.SYS_SECCOMP, setModeFilter, flagTsync, uintptr(unsafe.Pointer(&fprog))); en != 0 {
		return en
	}
	return nil
}
