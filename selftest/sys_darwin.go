package selftest

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// On darwin the probes that call a Linux-only syscall (mount, namespaces,
// keyrings, bpf, io_uring, modules, netlink, ptrace seize, open_by_handle,
// prlimit, O_TMPFILE, /proc/self/fd) cannot try what they check: each says
// UNKNOWN with this reason, never a pass. A darwin plan does not select
// them: its residuals take them out of the self-test and name the layer
// that stands in for each (policy/userdarwin.go, Residual.Unprobed).
// (Cross-compiled and vetted only: no Mac ran these probes.)
var errNotLinux = errors.New("not tried: the call is Linux's and this host is darwin")

func notLinux(target string) outcome {
	return outcome{target: target, decision: Unknown, observed: "not-linux", detail: errNotLinux.Error()}
}

// Placeholders of the Linux names the portable kernel table uses: on
// darwin no probe that takes one reaches a syscall with it.
const (
	cloneNewUser = 0
	cloneNewNS   = 0
	cloneNewNet  = 0
	errNoKey     = unix.Errno(0)
	afPacket     = -1 // darwin has no AF_PACKET; its link-layer access is /dev/bpf*
)

func callMount() error       { return errNotLinux }
func callFsopen() error      { return errNotLinux }
func callUmount() error      { return errNotLinux }
func callPivotRoot() error   { return errNotLinux }
func callSetns() error       { return errNotLinux }
func callKeyctl() error      { return errNotLinux }
func callAddKey() error      { return errNotLinux }
func callBPF() error         { return errNotLinux }
func callPerf() error        { return errNotLinux }
func callUserfaultfd() error { return errNotLinux }
func callIOUring() error     { return errNotLinux }
func callInitModule() error  { return errNotLinux }
func callFinitModule() error { return errNotLinux }
func callKexecLoad() error   { return errNotLinux }

func cloneExecMissing(uintptr) error { return errNotLinux }
func seizeAndDetach(int) error       { return errNotLinux }

func probeNetlink(*Env) outcome        { return notLinux("AF_NETLINK") }
func probeOpenByHandle(*Env) outcome   { return notLinux("open_by_handle_at") }
func probeProcessVMReadv(*Env) outcome { return notLinux("process_vm_readv") }
func probePrlimit(*Env) outcome        { return notLinux("prlimit") }

// socket opens a socket and marks it close-on-exec under the fork lock
// (darwin has no SOCK_CLOEXEC), as Go's net package does there.
func socket(domain, typ, proto int) (int, error) {
	if domain == afPacket {
		return -1, errNotLinux
	}
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := unix.Socket(domain, typ, proto)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	return fd, err
}

// socketpair makes a socket pair, both ends close-on-exec, under the fork
// lock.
func socketpair(domain, typ, proto int) ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(domain, typ, proto)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	return fds, err
}

// tryCreateIn creates a named file in dir and removes it at once (darwin
// has no O_TMPFILE).
func tryCreateIn(dir string) error { return createAndRemove(dir) }

// sunPathDarwin is the longest path darwin's sockaddr_un holds, with its
// NUL (104, where Linux's holds maxSunPath).
const sunPathDarwin = 104

// shortSocketPath returns p when a sockaddr_un holds it; darwin has no
// /proc/self/fd to shorten a longer one by.
func shortSocketPath(p string) (string, func(), error) {
	if len(p) < sunPathDarwin {
		return p, func() {}, nil
	}
	return "", nil, fmt.Errorf("%s is longer than a sockaddr_un holds, and darwin has no /proc/self/fd to reach it by", p)
}

// ParseMountinfo refuses: mountinfo is Linux's procfs format.
func ParseMountinfo([]byte) ([]Mount, error) {
	return nil, errors.New("mountinfo: /proc/PID/mountinfo is Linux's; darwin has none")
}

func unameRelease() string { return "" }

func probeKernel(*Env) outcome { return notLinux("uname, landlock") }

// readMounts is darwin's mount table, from getfsstat(2) (macOS has no
// procfs; proc is not read): each mounted filesystem at its mount point,
// showing its root (darwin has no bind mounts), its options from the
// mount flags, its device as the fsid's two words.
func readMounts(string) ([]Mount, error) {
	n, err := unix.Getfsstat(nil, unix.MNT_NOWAIT)
	if err != nil {
		return nil, fmt.Errorf("getfsstat: %w", err)
	}
	buf := make([]unix.Statfs_t, n)
	if n, err = unix.Getfsstat(buf, unix.MNT_NOWAIT); err != nil {
		return nil, fmt.Errorf("getfsstat: %w", err)
	}
	out := make([]Mount, 0, n)
	for i, st := range buf[:n] {
		opts := []string{"rw"}
		if st.Flags&unix.MNT_RDONLY != 0 {
			opts[0] = "ro"
		}
		for _, f := range []struct {
			bit  uint32
			name string
		}{{unix.MNT_NOSUID, "nosuid"}, {unix.MNT_NODEV, "nodev"}, {unix.MNT_NOEXEC, "noexec"}} {
			if st.Flags&f.bit != 0 {
				opts = append(opts, f.name)
			}
		}
		out = append(out, Mount{
			ID: i + 1, Dev: fmt.Sprintf("%d:%d", st.Fsid.Val[0], st.Fsid.Val[1]), Root: "/",
			MountPoint: unix.ByteSliceToString(st.Mntonname[:]), Options: strings.Join(opts, ","),
			FSType: unix.ByteSliceToString(st.Fstypename[:]), Source: unix.ByteSliceToString(st.Mntfromname[:]),
		})
	}
	return out, nil
}

// noNewPrivsThisThread: darwin has no no_new_privs, and no Landlock
// ruleset to enforce after it (PrepareLandlock prepares none there).
func noNewPrivsThisThread() error { return errNotLinux }

func closeFD(fd int) error { return unix.Close(fd) }

func restrictSelf(int, uint32) error { return errNotLinux }
