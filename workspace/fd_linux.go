package workspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// readDir lists the directory at fd, at most max entries, with the types
// the kernel gives, reading through buf. An entry of unknown type is
// lstat'ed relative to fd. more is true when the directory has entries
// beyond max.
func readDir(fd int, max int, buf []byte) (ents []entry, more bool, err error) {
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		return nil, false, err
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return ents, false, err
		}
		if n <= 0 {
			return ents, false, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return ents, false, fmt.Errorf("malformed directory entry")
			}
			name, typ := direntName(b[19:reclen]), b[18]
			b = b[reclen:]
			if name == "." || name == ".." {
				continue
			}
			if len(ents) == max {
				return ents, true, nil
			}
			if typ == unix.DT_UNKNOWN {
				typ = lstatType(fd, name)
			}
			ents = append(ents, entry{name: name, typ: typ})
		}
	}
}

func direntName(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
