package selftest

import (
	"errors"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// socket opens a close-on-exec socket.
func socket(domain, typ, proto int) (int, error) {
	return unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
}

// socketpair makes a close-on-exec socket pair.
func socketpair(domain, typ, proto int) ([2]int, error) {
	return unix.Socketpair(domain, typ|unix.SOCK_CLOEXEC, proto)
}

// tryCreateIn creates an unnamed file in dir (O_TMPFILE), or, where the
// filesystem has none, a named one it removes at once.
func tryCreateIn(dir string) error {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return unix.Close(fd)
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return createAndRemove(dir)
}

// unameRelease is this kernel's uname(2) release and version.
func unameRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

// probeKernel asks uname(2) and the Landlock ABI (landlock_create_ruleset
// with LANDLOCK_CREATE_RULESET_VERSION) of the kernel that serves it.
func probeKernel(e *Env) outcome {
	k := e.Config.Kernel
	if k.HostRelease == "" {
		return outcome{target: "uname, landlock", decision: Unknown, observed: "no-host-facts", detail: "the launcher gave no host kernel facts to compare with"}
	}
	llErr := ""
	if _, err := llsys.LandlockGetABIVersion(); err != nil {
		llErr = unix.ErrnoName(errnoOf(err))
		if llErr == "" {
			llErr = err.Error()
		}
	}
	d, o, detail := decideKernel(k, unameRelease(), llErr)
	return outcome{target: "uname, landlock", decision: d, observed: o, detail: detail}
}

func errnoOf(err error) unix.Errno {
	var en unix.Errno
	if errors.As(err, &en) {
		return en
	}
	return 0
}

// noNewPrivsThisThread sets no_new_privs on the calling thread.
func noNewPrivsThisThread() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }

func closeFD(fd int) error { return unix.Close(fd) }

// restrictSelf enforces a Landlock ruleset on the calling thread.
func restrictSelf(fd int, flags uint32) error { return llsys.LandlockRestrictSelf(fd, flags) }
