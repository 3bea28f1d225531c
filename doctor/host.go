package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbox/agentbox/host"
)

// Host is the machine doctor examines: files are read under Root, every
// other fact comes from Sys. Live returns this machine; tests pass a captured
// tree and a fixture System.
type Host struct {
	// Root is the host's root directory: "/" for this machine.
	Root string
	Sys  System
	// Darwin is true on macOS, where doctor also checks the dedicated
	// account and its pf fence (darwin.go).
	Darwin bool
}

// System answers what a root directory cannot: owners and modes, the PATH,
// command output, and two facts only the kernel can tell.
type System interface {
	// Stat describes an absolute host path, following symlinks.
	Stat(path string) (FileInfo, error)
	// LookPath finds an executable on the invoking user's PATH.
	LookPath(name string) (string, error)
	// Output runs a command and returns its standard output.
	Output(ctx context.Context, name string, args ...string) ([]byte, error)
	// LandlockABI asks the kernel for its Landlock ABI version (0: none).
	LandlockABI() (int, error)
	// NewUserNamespace starts a short-lived child process in a new user
	// namespace and reports why that failed.
	NewUserNamespace(ctx context.Context) error
	// EUID is the effective uid doctor runs as.
	EUID() int
	// Getenv reads the invoking user's environment.
	Getenv(name string) string
	// Writable reports whether the invoking user may create entries in
	// the absolute host directory dir.
	Writable(dir string) bool
	// Statfs describes the filesystem under the absolute host path p
	// (an error wrapping fs.ErrNotExist when p does not exist).
	Statfs(p string) (FSInfo, error)
}

// FileInfo is what doctor needs of a file: its type and permission bits
// and its owner.
type FileInfo struct {
	Mode     fs.FileMode
	UID, GID uint32
}

// FSInfo is what doctor needs of statfs(2): the filesystem's type
// (f_type).
type FSInfo struct {
	Type int64
}

// errNoFile reports a missing file; read treats it as absence, not error.
var errNoFile = fs.ErrNotExist

// read returns the file at the absolute host path p, and whether it exists.
// Errors other than absence are returned.
func (h Host) read(p string) ([]byte, bool, error) {
	b, err := os.ReadFile(h.path(p))
	if errors.Is(err, errNoFile) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	return b, true, nil
}

// reader is read as an io.Reader, empty when the file is missing or
// unreadable.
func (h Host) reader(p string) io.Reader {
	b, _, _ := h.read(p)
	return bytes.NewReader(b)
}

// readString is read, trimmed; "" when the file is missing or unreadable.
func (h Host) readString(p string) (string, bool) {
	b, ok, err := h.read(p)
	if err != nil || !ok {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// exists reports whether the absolute host path p exists under Root.
func (h Host) exists(p string) bool {
	_, err := os.Lstat(h.path(p))
	return err == nil
}

// tree is h as host.Tree, which reads the facts doctor shares with
// `agentbox run` (the account, cgroups and limits, AppArmor, mounts).
func (h Host) tree() host.Tree { return host.Tree{Dir: h.Root, Writable: h.Sys.Writable} }

// path maps an absolute host path onto Root.
func (h Host) path(p string) string {
	return filepath.Join(h.Root, filepath.Clean("/"+p))
}

// hostPath strips Root from a path under it, giving the host's own path.
func (h Host) hostPath(p string) string {
	rel, err := filepath.Rel(h.Root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return filepath.Clean("/" + rel)
}
