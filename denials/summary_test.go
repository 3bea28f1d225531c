//go:build linux

package denials

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// TestTableCoversTheLoggedSyscalls: every syscall the profile logs has a
// number (so that a notification is named) and no other is in the table.
func TestTableCoversTheLoggedSyscalls(t *testing.T) {
	logged := profiles.LoggedSyscalls()
	for _, name := range logged {
		s, ok := table[name]
		if !ok {
			t.Errorf("%s is logged but has no entry in table", name)
			continue
		}
		if Name(s.nr) != name {
			t.Errorf("Name(%d) = %q, want %q (two entries share a number?)", s.nr, Name(s.nr), name)
		}
		for _, a := range s.args {
			if a.i < 0 || a.i > 5 {
				t.Errorf("%s: argument %s has index %d", name, a.name, a.i)
			}
		}
	}
	for name := range table {
		if !slices.Contains(logged, name) {
			t.Errorf("table has %s, which the profile does not log", name)
		}
	}
	if got := Name(unix.SYS_GETPID); got != "syscall "+strconv.Itoa(unix.SYS_GETPID) {
		t.Errorf("Name(getpid) = %q", got)
	}
}

func TestSummary(t *testing.T) {
	mem := map[uint64]string{0x1000: "x", 0x2000: "/tmp", 0x3000: "tmpfs", 0x4000: "a b", 0x5000: "user", 0x6000: "k=v"}
	read := func(addr uint64) (string, bool) { s, ok := mem[addr]; return s, ok }
	tests := []struct {
		name string
		args [6]uint64
		read Reader
		want string
	}{
		{"mount", [6]uint64{0x1000, 0x2000, 0x3000, unix.MS_BIND}, read, "source=x target=/tmp fstype=tmpfs flags=0x1000"},
		{"mount", [6]uint64{0, 0x2000, 0x9999}, read, "source=NULL target=/tmp fstype=0x9999 flags=0x0"},
		{"mount", [6]uint64{0x1000, 0x2000, 0x3000}, nil, "source=0x1000 target=0x2000 fstype=0x3000 flags=0x0"},
		{"umount2", [6]uint64{0x4000, 2}, read, `target="a b" flags=0x2`},
		{"unshare", [6]uint64{unix.CLONE_NEWUSER | unix.CLONE_NEWNET | 0x1}, read, "flags=CLONE_NEWUSER|CLONE_NEWNET|0x1"},
		{"unshare", [6]uint64{0}, read, "flags=0x0"},
		{"setns", [6]uint64{5, unix.CLONE_NEWNS}, read, "fd=5 nstype=CLONE_NEWNS"},
		{"ptrace", [6]uint64{unix.PTRACE_ATTACH, 1}, read, "request=PTRACE_ATTACH pid=1"},
		{"ptrace", [6]uint64{0x4207, 1}, read, "request=0x4207 pid=1"},
		{"open_tree", [6]uint64{0xffffff9c, 0x2000, 1}, read, "dfd=-100 path=/tmp flags=0x1"},
		{"add_key", [6]uint64{0x5000, 0x6000}, read, `type=user description="k=v"`},
		{"init_module", [6]uint64{0xdead, 4096, 0x1000}, read, "len=4096 params=x"},
		{"perf_event_open", [6]uint64{0x7000, 0xffffffff, 0, 0xffffffff, 8}, read, "pid=-1 cpu=0 group_fd=-1 flags=0x8"},
		{"syscall 999", [6]uint64{1, 2, 3, 4}, read, "args=0x1,0x2,0x3,0x4"},
	}
	for _, tt := range tests {
		if got := Summary(tt.name, tt.args, tt.read); got != tt.want {
			t.Errorf("Summary(%s, %#x) = %q, want %q", tt.name, tt.args[:4], got, tt.want)
		}
	}
}

func TestMemReadStopsAtNULAndCap(t *testing.T) {
	f := openMem(strconv.Itoa(os.Getpid()))
	if f == nil {
		t.Fatal("cannot open this process's /proc/PID/mem")
	}
	defer f.close()
	short := []byte("hello\x00world")
	if s, ok := f.read(addrOf(short)); !ok || s != "hello" {
		t.Errorf("read %q %v, want hello", s, ok)
	}
	long := make([]byte, 2*maxString)
	for i := range long {
		long[i] = 'a'
	}
	if s, ok := f.read(addrOf(long)); !ok || len(s) != maxString+len("…") {
		t.Errorf("read %d bytes %v, want %d and an ellipsis", len(s), ok, maxString)
	}
	if _, ok := f.read(8); ok {
		t.Error("read of an unmapped address succeeded")
	}
	var none *mem
	if _, ok := none.read(addrOf(short)); ok {
		t.Error("a nil mem read something")
	}
}

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
