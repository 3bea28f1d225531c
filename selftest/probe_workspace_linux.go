package selftest

import (
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// shortSocketPath returns a path to connect to p by, shorter than a
// sockaddr_un's limit: p itself, or p's name below /proc/self/fd/N of its
// directory opened with O_PATH (what a long workspace path needs).
func shortSocketPath(p string) (string, func(), error) {
	if len(p) < maxSunPath {
		return p, func() {}, nil
	}
	fd, err := unix.Open(filepath.Dir(p), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + filepath.Base(p), func() { unix.Close(fd) }, nil
}

// maxSunPath is the longest path a sockaddr_un holds, with its NUL.
const maxSunPath = 108
