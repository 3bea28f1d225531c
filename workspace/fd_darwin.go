package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// readDir lists the directory at fd, at most max entries, with the types
// readdir(3) gives (Go's os reads a dup of fd, positioned at its start).
// An entry of unknown type is lstat'ed relative to fd. more is true when
// the directory has entries beyond max. APFS and HFS+ fill in every
// entry's type; on a filesystem that gives none, Go's os lstats the entry
// by a name that does not resolve and drops it, so such a directory lists
// short (cross-compiled only: never run on a Mac).
func readDir(fd int, max int, _ []byte) (ents []entry, more bool, err error) {
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		return nil, false, err
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, false, err
	}
	unix.CloseOnExec(dup)
	d := os.NewFile(uintptr(dup), "workspace directory")
	defer d.Close()
	list, err := d.ReadDir(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	for _, de := range list {
		if len(ents) == max {
			return ents, true, nil
		}
		typ := direntType(de.Type())
		if typ == unix.DT_UNKNOWN {
			typ = lstatType(fd, de.Name())
		}
		ents = append(ents, entry{name: de.Name(), typ: typ})
	}
	return ents, false, nil
}

// direntType is the DT_* type of a directory entry's mode type bits.
func direntType(m fs.FileMode) uint8 {
	switch {
	case m.IsRegular():
		return unix.DT_REG
	case m&fs.ModeDir != 0:
		return unix.DT_DIR
	case m&fs.ModeSymlink != 0:
		return unix.DT_LNK
	case m&fs.ModeSocket != 0:
		return unix.DT_SOCK
	case m&fs.ModeNamedPipe != 0:
		return unix.DT_FIFO
	}
	return unix.DT_UNKNOWN
}
