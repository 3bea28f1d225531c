package workspace

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Every open below is relative to a directory fd, of one name, with
// O_NOFOLLOW: no path is ever re-resolved and no symlink followed.

// openDir opens the directory name below dirfd.
func openDir(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// openRoot opens the workspace itself. The path comes from the plan,
// every symlink in it resolved; a final symlink is refused all the same.
func openRoot(path string) (int, error) {
	return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// entry is one directory entry with its type from getdents (DT_*).
type entry struct {
	name string
	typ  uint8
}

// lstatType returns the DT_* type of name below dirfd, without following.
func lstatType(dirfd int, name string) uint8 {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return unix.DT_UNKNOWN
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	case unix.S_IFSOCK:
		return unix.DT_SOCK
	case unix.S_IFIFO:
		return unix.DT_FIFO
	}
	return unix.DT_UNKNOWN
}

// ReadEntry reads at most max bytes of the regular file name directly in
// the directory dir, as root may read what an agent wrote: through fds,
// following no link (dir's last component included), a FIFO not blocking.
func ReadEntry(dir, name string, max int64) ([]byte, error) {
	root, err := openRoot(dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	data, _, err := readFile(root, name, max)
	return data, err
}

// readFile reads at most max bytes of the regular file name below dirfd.
// O_NONBLOCK keeps a FIFO planted under that name from blocking the open;
// the fstat then refuses anything but a regular file. truncated is true
// when the file is longer than max.
func readFile(dirfd int, name string, max int64) (data []byte, truncated bool, err error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, fmt.Errorf("%s is not a regular file", name)
	}
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if int64(len(data)) > max {
		return data[:max], true, err
	}
	return data, false, err
}

// readLink returns the target of the symlink name below dirfd.
func readLink(dirfd int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// devOf returns the device of the open file fd.
func devOf(fd int) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return uint64(st.Dev), nil // int32 on darwin
}
