package selftest

import (
	"errors"

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
