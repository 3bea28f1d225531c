//go:build linux

package denials

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/ledger"
)

// helperEnv makes the test binary the filtered process of
// TestListenerRefusesAndRecords: its value is the listener's socket.
const helperEnv = "AGENTBOX_DENIALS_HELPER"

func TestMain(m *testing.M) {
	if sock := os.Getenv(helperEnv); sock != "" {
		os.Exit(helper(sock))
	}
	if dir := os.Getenv(landlockHelperEnv); dir != "" {
		os.Exit(landlockHelper(dir))
	}
	os.Exit(m.Run())
}

// helper installs a filter that notifies mount and unshare and allows the
// rest, sends its notification fd to sock as a runtime would, then makes
// the calls the parent asks for on stdin, one errno name per line.
func helper(sock string) int {
	runtime.LockOSThread() // the filter is this thread's: every call below is made here
	fd, err := installNotifyFilter(unix.SYS_MOUNT, unix.SYS_UNSHARE)
	if err != nil {
		fmt.Println("filter:", err)
		return 1
	}
	if err := sendFd(sock, fd); err != nil {
		fmt.Println("send:", err)
		return 1
	}
	unix.Close(fd) // the listener holds the only copy now
	src, _ := unix.BytePtrFromString("agentbox-test")
	target, _ := unix.BytePtrFromString("/nonexistent/mnt")
	fstype, _ := unix.BytePtrFromString("tmpfs")
	calls := map[string]func() unix.Errno{
		"mount": func() unix.Errno {
			_, _, e := unix.RawSyscall6(unix.SYS_MOUNT, uintptr(unsafe.Pointer(src)), uintptr(unsafe.Pointer(target)), uintptr(unsafe.Pointer(fstype)), 0, 0, 0)
			return e
		},
		"unshare": func() unix.Errno {
			_, _, e := unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER|unix.CLONE_NEWNS, 0, 0)
			return e
		},
		"getppid": func() unix.Errno { _, _, e := unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0); return e },
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var out []string
		for _, name := range strings.Fields(sc.Text()) {
			e := calls[name]()
			out = append(out, name+"="+errnoName(e))
		}
		fmt.Println(strings.Join(out, " "))
	}
	return 0
}

func errnoName(e unix.Errno) string {
	if e == 0 {
		return "ok"
	}
	return unix.ErrnoName(e)
}

// installNotifyFilter loads, for the calling thread, a filter whose
// listed syscalls notify and whose others are allowed, and returns the
// notification fd.
func installNotifyFilter(nrs ...int) (int, error) {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}, // arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nativeAuditArch, Jt: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // nr
	}
	for _, nr := range nrs {
		prog = append(prog,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: uint32(nr), Jf: 1},
			unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF})
	}
	prog = append(prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW})
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// sendFd is what runc and crun do with listenerPath: one message, the
// container process state, with the fd as SCM_RIGHTS.
func sendFd(sock string, fd int) error {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return err
	}
	defer c.Close()
	st, _ := json.Marshal(specs.ContainerProcessState{Version: specs.Version, Fds: []string{specs.SeccompFdName}, Pid: os.Getpid(), State: specs.State{ID: "test"}})
	_, _, err = c.WriteMsgUnix(st, unix.UnixRights(fd), nil)
	return err
}

func TestListenerRefusesAndRecords(t *testing.T) {
	dir := t.TempDir()
	var streamed []ledger.Denial
	l, err := Listen(filepath.Join(dir, "denials.sock"), Options{OnDenial: func(d ledger.Denial) { streamed = append(streamed, d) }})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+l.Path)
	in, _ := cmd.StdinPipe()
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(outR)
	if first := readLine(t, out); first != "ready" {
		_ = cmd.Wait()
		if strings.HasPrefix(first, "filter:") {
			testutil.Skip(t, "this kernel cannot install a seccomp notify filter: "+first)
		}
		t.Fatalf("helper: %s", first)
	}
	if err := KernelSupport(); err != nil {
		t.Errorf("the notify filter loaded, yet KernelSupport says: %v", err)
	}
	ask := func(calls string) string {
		fmt.Fprintln(in, calls)
		return readLine(t, out)
	}
	// Before AgentStarted: the self-test's probes, counted, not listed.
	if got := ask("mount"); got != "mount=EPERM" {
		t.Errorf("probe phase: %s, want mount=EPERM", got)
	}
	l.AgentStarted()
	if got := ask("mount unshare getppid"); got != "mount=EPERM unshare=EPERM getppid=ok" {
		t.Errorf("agent phase: %s", got)
	}
	log := l.Stop()
	// With the listener gone, the kernel answers ENOSYS: the call still
	// fails, and nothing waits.
	if got := ask("mount getppid"); got != "mount=ENOSYS getppid=ok" {
		t.Errorf("after Stop: %s, want mount=ENOSYS getppid=ok", got)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("helper: %v", err)
	}
	if !log.Layer.Logged || log.Layer.Probes != 1 || log.Layer.Dropped != 0 || log.Layer.Detail != "" {
		t.Errorf("layer %+v, want logged with 1 probe denial", log.Layer)
	}
	if len(log.Denials) != 2 {
		t.Fatalf("denials %+v, want mount and unshare", log.Denials)
	}
	comm := filepath.Base(os.Args[0])
	if len(comm) > 15 {
		comm = comm[:15]
	}
	want := []struct{ syscall, args string }{
		{"mount", "source=agentbox-test target=/nonexistent/mnt fstype=tmpfs flags=0x0"},
		{"unshare", "flags=CLONE_NEWUSER|CLONE_NEWNS"},
	}
	for i, d := range log.Denials {
		if d.Syscall != want[i].syscall || d.Args != want[i].args || d.PID != cmd.Process.Pid || d.Comm != comm || d.Layer != ledger.LayerSeccomp || d.Time.IsZero() {
			t.Errorf("denial %d: %+v, want %s %q by pid %d (%s)", i, d, want[i].syscall, want[i].args, cmd.Process.Pid, comm)
		}
	}
	if len(streamed) != 2 || streamed[0] != log.Denials[0] {
		t.Errorf("OnDenial saw %+v", streamed)
	}
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return strings.TrimSuffix(s, "\n")
}

func TestListenerWithoutRuntimeSaysSo(t *testing.T) {
	l, err := Listen(filepath.Join(t.TempDir(), "d.sock"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := l.Stop()
	if log.Layer.Logged || !strings.Contains(log.Layer.Detail, "never sent") {
		t.Errorf("layer %+v", log.Layer)
	}
}

func TestListenerRejectsAMessageWithoutTheFd(t *testing.T) {
	l, err := Listen(filepath.Join(t.TempDir(), "d.sock"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", l.Path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte(`{"ociVersion":"1.2.0","fds":[],"pid":1,"state":{"id":"x"}}`))
	c.Close()
	// Stop waits for accept, which has read the message by then or reads
	// it now: either way the layer says what was wrong.
	log := l.Stop()
	if log.Layer.Logged {
		t.Errorf("layer %+v: logged without an fd", log.Layer)
	}
}
