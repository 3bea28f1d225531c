package denials

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
)

// The structures and ioctls of linux/seccomp.h (seccomp_unotify(2)); x/sys
// has the RECV and SEND numbers, not the structures or ID_VALID.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	PID   uint32
	Flags uint32
	Data  seccompData
}

// nativeAuditArch is the audit architecture (linux/audit.h) of the filter
// agentbox installs: the native one; the filter kills the others.
var nativeAuditArch = map[string]uint32{"amd64": 0xc000003e, "arm64": 0xc00000b7}[runtime.GOARCH]

// call is one notification as received, with what was read about it.
type call struct {
	notif seccompNotif
	name  string
	comm  string
	args  string
}

// describe names the call and reads the caller's command name and the
// argument strings; what it read is kept only when the notification is
// still valid afterwards.
func describe(fd int, n seccompNotif) call {
	c := call{notif: n, name: syscallName(n.Data)}
	if n.PID == 0 { // the caller is in no pid namespace of ours
		c.args = Summary(c.name, n.Data.Args, nil)
		return c
	}
	pid := strconv.Itoa(int(n.PID))
	comm, _ := os.ReadFile("/proc/" + pid + "/comm")
	mem := openMem(pid)
	c.args = Summary(c.name, n.Data.Args, mem.read)
	mem.close()
	if !stillWaiting(fd, n.ID) {
		return call{notif: n, name: c.name, args: Summary(c.name, n.Data.Args, nil)}
	}
	c.comm = string(bytes.TrimSuffix(comm, []byte("\n")))
	return c
}

func syscallName(d seccompData) string {
	if d.Arch != nativeAuditArch {
		return fmt.Sprintf("syscall %d (arch %#x)", d.Nr, d.Arch)
	}
	return Name(int(d.Nr))
}

// mem is the caller's memory, opened read-only, or nil.
type mem struct{ f *os.File }

func openMem(pid string) *mem {
	f, err := os.Open("/proc/" + pid + "/mem")
	if err != nil {
		return nil
	}
	return &mem{f}
}

func (m *mem) close() {
	if m != nil {
		m.f.Close()
	}
}

// maxString is how much of one string argument a summary reads.
const maxString = 256

// read reads the NUL-terminated string at addr, at most maxString bytes,
// one page at a time so that a string that ends before an unmapped page
// reads whole. A longer string ends in "…".
func (m *mem) read(addr uint64) (string, bool) {
	if m == nil {
		return "", false
	}
	page := uint64(os.Getpagesize())
	var out []byte
	for len(out) < maxString {
		n := min(page-(addr%page), uint64(maxString-len(out)))
		buf := make([]byte, n)
		got, err := m.f.ReadAt(buf, int64(addr))
		if got == 0 && err != nil {
			return "", false
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			return string(append(out, buf[:i]...)), true
		}
		out = append(out, buf[:got]...)
		addr += uint64(got)
	}
	return string(out) + "…", true
}
