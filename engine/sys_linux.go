package engine

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

const syscallNoFollow = syscall.O_NOFOLLOW

// ioctlGetTermios reads a terminal's settings.
const ioctlGetTermios = unix.TCGETS

// reopenNonblock opens the terminal f is once more, as a description of
// its own with O_NONBLOCK: reads from it take the same input, and the flag
// does not reach the user's shell, which shares f's description.
func reopenNonblock(f *os.File) (*os.File, error) {
	name := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// renameNoReplace renames from to to, failing when to exists.
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}
