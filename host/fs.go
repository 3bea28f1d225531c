package host

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/agentbox/agentbox/policy"
)

// OSFS implements policy.FS on the real file system.
type OSFS struct{}

var _ policy.FS = OSFS{}

// Stat follows symlinks.
func (OSFS) Stat(path string) (policy.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return policy.FileInfo{}, err
	}
	return info(fi, ""), nil
}

// Lstat does not follow a final symlink.
func (OSFS) Lstat(path string) (policy.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return policy.FileInfo{}, err
	}
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		if link, err = os.Readlink(path); err != nil {
			return policy.FileInfo{}, err
		}
	}
	return info(fi, link), nil
}

// ReadDir lists path like Lstat of each entry, sorted by name.
func (o OSFS) ReadDir(path string) ([]policy.DirEntry, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	out := make([]policy.DirEntry, 0, len(entries))
	for _, e := range entries {
		fi, err := o.Lstat(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, policy.DirEntry{Name: e.Name(), FileInfo: fi})
	}
	return out, nil
}

// EvalSymlinks resolves every symlink of an absolute path.
func (OSFS) EvalSymlinks(path string) (string, error) { return filepath.EvalSymlinks(path) }

// LookPath finds name on the launcher's PATH.
func (OSFS) LookPath(name string) (string, error) { return exec.LookPath(name) }

// ReadHead reads at most n bytes from the start of the regular file at
// path; it never blocks on a FIFO or a device, which it refuses.
func (OSFS) ReadHead(path string, n int) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // #nosec G304 -- planning reads the host's own files by design
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:m], err
}

func info(fi fs.FileInfo, link string) policy.FileInfo {
	out := policy.FileInfo{Mode: fi.Mode(), Link: link}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.UID, out.GID = st.Uid, st.Gid
	}
	return out
}
