package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// MaxFileSize caps a policy file. Real policies are a few hundred bytes; a
// larger file is refused before it is read whole, so that a file the agent
// pointed at /dev/zero or grew to gigabytes cannot grow the launcher.
const MaxFileSize = 64 << 10

// ReadFile reads one policy file the way a root launcher must read a file
// that someone else may have written: it never follows a final symbolic
// link (O_NOFOLLOW), never blocks on a FIFO (O_NONBLOCK), refuses anything
// but a regular file, and reads at most MaxFileSize bytes. The returned
// bytes are the ones that get parsed and digested, so what is trusted is
// exactly what is used. A missing file is reported with
// errors.Is(err, fs.ErrNotExist).
func ReadFile(path string) ([]byte, FileInfo, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, FileInfo{}, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, FileInfo{}, fmt.Errorf("stat %s: %w", path, err)
	}
	info := FileInfo{Mode: fileMode(uint32(st.Mode)), UID: st.Uid, GID: st.Gid} // uint32: Mode is 16 bits on darwin
	if !info.Mode.IsRegular() {
		return nil, info, &InputError{File: path, Msg: fmt.Sprintf("not a regular file (%s)", kindOf(info.Mode)), Fix: "a policy is a YAML file; point at one"}
	}
	if st.Size > MaxFileSize {
		return nil, info, tooLarge(path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, info, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, info, tooLarge(path)
	}
	return data, info, nil
}

func openNoFollow(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return nil, fmt.Errorf("read policy %s: %w", path, fs.ErrNotExist)
	case errors.Is(err, unix.ELOOP):
		return nil, &InputError{File: path, Msg: "is a symbolic link, and policy files are opened without following links", Fix: "point at the file itself"}
	case errors.Is(err, unix.EACCES):
		return nil, &InputError{File: path, Msg: "permission denied", Fix: "make it readable by the user who runs agentbox"}
	case err != nil:
		return nil, fmt.Errorf("open policy %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

func tooLarge(path string) error {
	return &InputError{File: path, Msg: fmt.Sprintf("larger than %d KiB", MaxFileSize>>10), Fix: "a policy file is small; check that this is the file you meant"}
}

// CheckOwner refuses a policy file that someone other than the invoking
// user (euid) or root could have written: its owner must be one of them,
// and neither its group nor others may write it. Only the user's own
// files are trusted without a digest.
func CheckOwner(path string, fi FileInfo, euid uint32) error {
	if fi.UID != euid && fi.UID != 0 {
		return &InputError{File: path, Msg: fmt.Sprintf("owned by uid %d, not by you (uid %d) or root", fi.UID, euid), Fix: "only your own policy files are read; copy it and own the copy"}
	}
	if fi.Mode.Perm()&0o022 != 0 {
		return &InputError{File: path, Msg: fmt.Sprintf("writable by group or others (mode %04o)", fi.Mode.Perm()), Fix: "run: chmod go-w " + path}
	}
	return nil
}

func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return mode
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}
