package seccomp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/seccomp/profiles"
)

// probeHelperEnv makes the test binary a helper process (see TestMain):
// the mode (see probeHelper) says which filter it loads first.
const probeHelperEnv = "AGENTBOX_SECCOMP_PROBE_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(probeHelperEnv); mode != "" {
		os.Exit(probeHelper(mode))
	}
	os.Exit(m.Run())
}

// badFlag is a bit socket(2) rejects with EINVAL after seccomp has let the
// call through (it is neither SOCK_NONBLOCK nor SOCK_CLOEXEC), so a probe
// that gets EINVAL was allowed and one that gets EPERM was refused, and no
// socket is created either way.
const badFlag = 0x100

const none = ^uintptr(0) // -1 as an fd or pid

// readImpliesExec is READ_IMPLIES_EXEC from linux/personality.h.
const readImpliesExec = 0x0400000

// A probe is one side-effect-free syscall: bad pointers, bad fds or an
// invalid flag make it fail in the kernel when the filter lets it through.
type probe struct {
	name       string
	want       string // outcome under agentbox's filter
	call       func() string
	onlyFilter bool // would change the helper's state if allowed
}

func raw(nr uintptr, args ...uintptr) func() string {
	return func() string {
		var a [6]uintptr
		copy(a[:], args)
		r, _, errno := unix.RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if errno != 0 {
			return unix.ErrnoName(errno)
		}
		if nr == unix.SYS_SOCKET {
			unix.Close(int(r))
		}
		return "ok"
	}
}

func probes() []probe {
	return []probe{
		{name: "getpid", want: "ok", call: raw(unix.SYS_GETPID)},
		{name: "mount", want: "EPERM", call: raw(unix.SYS_MOUNT, 1, 1, 1, 0, 0)},
		{name: "umount2", want: "EPERM", call: raw(unix.SYS_UMOUNT2, 1, 0)},
		// CLONE_SETTLS is invalid for unshare: EINVAL if allowed.
		{name: "unshare(CLONE_NEWUSER)", want: "EPERM", call: raw(unix.SYS_UNSHARE, unix.CLONE_NEWUSER|unix.CLONE_SETTLS)},
		{name: "setns", want: "EPERM", call: raw(unix.SYS_SETNS, none, unix.CLONE_NEWUSER)},
		// CLONE_NEWUSER|CLONE_FS is invalid: EINVAL if allowed.
		{name: "clone(CLONE_NEWUSER)", want: "EPERM", call: raw(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_FS)},
		// CLONE_SIGHAND without CLONE_VM is invalid: EINVAL means allowed.
		{name: "clone(CLONE_SIGHAND)", want: "EINVAL", call: raw(unix.SYS_CLONE, unix.CLONE_SIGHAND)},
		{name: "clone3", want: "ENOSYS", call: raw(unix.SYS_CLONE3, 0, 0)},
		{name: "fork+exec /bin/true", want: "ok", call: execTrue},
		{name: "keyctl", want: "EPERM", call: raw(unix.SYS_KEYCTL, 0xffff)},
		{name: "add_key", want: "EPERM", call: raw(unix.SYS_ADD_KEY, 1, 1, 1, 0, 0)},
		{name: "bpf", want: "EPERM", call: raw(unix.SYS_BPF, 0xffff, 0, 0)},
		{name: "perf_event_open", want: "EPERM", call: raw(unix.SYS_PERF_EVENT_OPEN, 1, 0, none, none, 0)},
		{name: "io_uring_setup", want: "EPERM", call: raw(unix.SYS_IO_URING_SETUP, 1, 1)},
		{name: "userfaultfd", want: "EPERM", call: raw(unix.SYS_USERFAULTFD, 0xffff)},
		{name: "ptrace", want: "EPERM", call: raw(unix.SYS_PTRACE, 0xffff, 0)},
		{name: "process_vm_readv", want: "EPERM", call: raw(unix.SYS_PROCESS_VM_READV, 0, 0, 0, 0, 0, 1)},
		{name: "open_by_handle_at", want: "EPERM", call: raw(unix.SYS_OPEN_BY_HANDLE_AT, none, 1, 0)},
		{name: "name_to_handle_at", want: "EPERM", call: raw(unix.SYS_NAME_TO_HANDLE_AT, none, 1, 1, 1, 0)},
		{name: "socket(AF_PACKET)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW|badFlag)},
		{name: "socket(AF_PACKET|1<<32)", want: "EPERM", call: raw(unix.SYS_SOCKET, 1<<32|unix.AF_PACKET, unix.SOCK_DGRAM|badFlag)},
		{name: "socket(AF_INET, SOCK_RAW)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_RAW|badFlag)},
		{name: "socket(AF_INET6, SOCK_RAW)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_RAW|badFlag)},
		{name: "socket(AF_INET, SOCK_PACKET)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_PACKET|badFlag)},
		{name: "socket(AF_INET, SOCK_STREAM)", want: "ok", call: raw(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC)},
		{name: "socket(AF_UNIX, SOCK_STREAM)", want: "ok", call: raw(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC)},
		{name: "socket(AF_INET6, SOCK_DGRAM)", want: "EINVAL", call: raw(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_DGRAM|badFlag)},
		{name: "socket(AF_NETLINK, SOCK_RAW)", want: "EINVAL", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|badFlag)},
		// Netlink sockets are opened for real and closed at once: no
		// message is sent, nothing is bound.
		{name: "socket(AF_NETLINK, NETLINK_ROUTE)", want: "ok", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)},
		{name: "socket(AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE)", want: "ok", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)},
		{name: "socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_KOBJECT_UEVENT)},
		{name: "socket(AF_NETLINK, NETLINK_SOCK_DIAG)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)},
		{name: "socket(AF_NETLINK, NETLINK_AUDIT)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_AUDIT)},
		{name: "socket(AF_NETLINK, NETLINK_GENERIC)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)},
		// Upper bits of the protocol are dropped by the kernel (an int);
		// the filter compares all 64 and refuses.
		{name: "socket(AF_NETLINK, 1<<32|NETLINK_ROUTE)", want: "EPERM", call: raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 1<<32|unix.NETLINK_ROUTE)},
		{name: "personality(query)", want: "ok", call: raw(unix.SYS_PERSONALITY, 0xffffffff)},
		{name: "personality(READ_IMPLIES_EXEC)", want: "EPERM", call: raw(unix.SYS_PERSONALITY, readImpliesExec), onlyFilter: true},
	}
}

func execTrue() string {
	if err := exec.Command("/bin/true").Run(); err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			return unix.ErrnoName(errno)
		}
		return err.Error()
	}
	return "ok"
}

// probeHelper runs in the re-executed test binary and prints one JSON
// object: probe name -> outcome, plus the Seccomp and NoNewPrivs lines of
// /proc/self/status. Mode "control" runs the probes as they are,
// "libseccomp" under the filter libseccomp builds and loads, "compiled"
// under Compile's program, loaded the way agentbox-init loads it.
func probeHelper(mode string) int {
	runtime.LockOSThread()
	var err error
	switch mode {
	case "control":
	case "libseccomp":
		err = loadLibseccompFilter()
	case "compiled":
		err = loadCompiledFilter()
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load filter:", err)
		return 3
	}
	out := map[string]string{}
	for _, p := range probes() {
		if mode != "control" || !p.onlyFilter {
			out[p.name] = p.call()
		}
	}
	for k, v := range procStatus() {
		out[k] = v
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

// loadLibseccompFilter compiles the native profile with libseccomp and
// loads it (libseccomp_kernel_linux_test.go); nil without cgo.
var loadLibseccompFilter func() error

// loadCompiledFilter compiles the native profile with Compile and loads it
// as agentbox-init does: no_new_privs, then seccomp(2) with TSYNC, so that
// every thread of the Go runtime is filtered.
func loadCompiledFilter() error {
	p, err := profiles.Default().NativeOCI()
	if err != nil {
		return err
	}
	prog, err := Compile(p)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(prog.Instructions), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog.BPF[0]))}
	_, _, en := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog.BPF)
	if en != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER) of %d instructions: %w", prog.Instructions, en)
	}
	return nil
}

func procStatus() map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		k, v, _ := strings.Cut(s.Text(), ":")
		if k == "Seccomp" || k == "NoNewPrivs" {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

func runProbeHelper(t *testing.T, mode string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), probeHelperEnv+"="+mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s helper: %v\n%s", mode, err, stderr.String())
	}
	out := map[string]string{}
	if err := json.Unmarshal(stdout, &out); err != nil {
		t.Fatalf("%s helper output %q: %v", mode, stdout, err)
	}
	return out
}

func requireSeccompFilter(t *testing.T) {
	t.Helper()
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); errors.Is(err, unix.EINVAL) {
		testutil.Skip(t, "kernel built without CONFIG_SECCOMP")
	}
	if _, err := os.Stat("/bin/true"); err != nil {
		testutil.Skip(t, "/bin/true missing (apt-get install coreutils)")
	}
}

// TestKernelEnforcesProfile loads agentbox's filter in a helper process
// (no root needed: no_new_privs suffices), once as Compile builds it and
// once as libseccomp does, and checks the outcome of real syscalls. A
// control run without the filter shows that the probes tell the filter's
// refusals from the kernel's own answers.
func TestKernelEnforcesProfile(t *testing.T) {
	requireSeccompFilter(t)
	control := runProbeHelper(t, "control")
	for _, mode := range []string{"compiled", "libseccomp"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "libseccomp" && loadLibseccompFilter == nil {
				testutil.Skip(t, "built without cgo: libseccomp's filter is not loaded")
			}
			filtered := runProbeHelper(t, mode)
			if filtered["Seccomp"] != "2" || filtered["NoNewPrivs"] != "1" {
				t.Fatalf("helper did not run under a filter: Seccomp=%q NoNewPrivs=%q", filtered["Seccomp"], filtered["NoNewPrivs"])
			}
			for _, p := range probes() {
				got := filtered[p.name]
				if got != p.want {
					t.Errorf("%s: got %s under agentbox's filter, want %s (without the filter: %s)", p.name, got, p.want, control[p.name])
				}
				t.Logf("%-44s filtered=%-7s unfiltered=%s", p.name, got, control[p.name])
			}
		})
	}
	if control["Seccomp"] != "0" {
		t.Logf("the test itself runs under a seccomp filter (Seccomp=%s); control outcomes reflect it", control["Seccomp"])
		return
	}
	// Unconfined, the kernel answers these probes itself, differently.
	for name, want := range map[string]string{
		"mount": "EFAULT", "clone3": "EINVAL", "socket(AF_PACKET)": "EINVAL",
		// Any user may open these netlink sockets: the EPERM is the filter's.
		"socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)": "ok", "socket(AF_NETLINK, NETLINK_SOCK_DIAG)": "ok",
		"socket(AF_NETLINK, NETLINK_GENERIC)": "ok",
	} {
		if control[name] != want {
			t.Errorf("control %s: got %s, want %s; the probe does not tell the filter from the kernel", name, control[name], want)
		}
	}
}
