package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

const syscallNoFollow = syscall.O_NOFOLLOW

// ioctlGetTermios reads a terminal's settings.
const ioctlGetTermios = unix.TIOCGETA

// errNoNamespaces is the answer of every part of the runtime engine on
// darwin: an OCI runtime, its namespaces and the POSIX ACL grant are
// Linux's.
var errNoNamespaces = errors.New("the runtime engine needs Linux namespaces; on macOS agentbox runs the agent as a dedicated account: --isolation user")

// runInMountNS refuses: mount namespaces are Linux's.
func runInMountNS(*exec.Cmd, string, string) error { return errNoNamespaces }

// command is a command that fails to start with errNoNamespaces.
func (n UserNS) command(ctx context.Context, _ string, _ []string, _ int, _ string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, n.Helper)
	cmd.Err = errNoNamespaces
	return cmd
}

// BecomeSubreaper refuses: darwin has no child subreaper (the user engine
// there starts the agent as this process's own child and needs none).
func BecomeSubreaper() error {
	return fmt.Errorf("become child subreaper: darwin has none: %w", errNoNamespaces)
}

// NewGrant refuses: the POSIX ACL grant is Linux's; on darwin the user
// engine grants the workspace with an extended ACL (chmod +a).
func NewGrant(string, uint32, uint32, string) (*Grant, error) {
	return nil, errors.New("the workspace grant by POSIX ACLs needs Linux; on macOS the --isolation user engine grants the workspace with chmod +a")
}

// Apply refuses, as NewGrant does.
func (g *Grant) Apply() (GrantReport, error) { return GrantReport{}, errNoNamespaces }

// Revoke refuses, as NewGrant does.
func (g *Grant) Revoke() (GrantReport, error) { return GrantReport{}, errNoNamespaces }

// RemoveTree deletes the directory at path and everything under it with
// os.RemoveAll, which on darwin works by directory fds (openat with
// O_NOFOLLOW, unlinkat) and never follows a symlink below path; a symlink
// at path itself is removed, not followed. A path that does not exist is
// not an error. Unlike Linux's walk it does not stop at a mount point:
// nothing agentbox runs on darwin can mount (cross-compiled only: never
// run on a Mac).
func RemoveTree(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return os.Remove(path)
	}
	if err := os.RemoveAll(filepath.Clean(path)); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// mountsUnder lists the mount points under dir (getfsstat(2)).
func mountsUnder(dir string) []string {
	n, err := unix.Getfsstat(nil, unix.MNT_NOWAIT)
	if err != nil || n <= 0 {
		return nil
	}
	buf := make([]unix.Statfs_t, n)
	if n, err = unix.Getfsstat(buf, unix.MNT_NOWAIT); err != nil {
		return nil
	}
	var out []string
	for _, s := range buf[:n] {
		if p := unix.ByteSliceToString(s.Mntonname[:]); within(p, dir) {
			out = append(out, p)
		}
	}
	return out
}

// reopenNonblock is not built on darwin: without it, the input typed ahead
// is left to the raw copy.
func reopenNonblock(*os.File) (*os.File, error) { return nil, errors.ErrUnsupported }

// renameNoReplace renames from to to, failing when to exists.
func renameNoReplace(from, to string) error { return unix.RenamexNp(from, to, unix.RENAME_EXCL) }

// foregroundSupported: no runtime runs a sandbox in the foreground on
// darwin (Runtime.Foreground is false there).
const foregroundSupported = false

// RunForeground refuses: the runtime engine is Linux's.
func (r Runtime) RunForeground(context.Context, string, string, CreateOptions) (*Foreground, error) {
	return nil, errNoNamespaces
}

func signalPidfd(int, syscall.Signal) error { return errNoNamespaces }

// awaitInit: no foreground runtime ever runs on darwin.
func (f *Foreground) awaitInit() bool { return false }

func closeFD(int) {}

// runtimeGone: no foreground runtime ever ran on darwin.
func runtimeGone(int, uint64) bool { return true }

func killRuntime(int, uint64) {}

// rootTmpfs refuses a tmpfs root: the runtime engine is Linux's.
func rootTmpfs(_ string, tmpfs bool) error {
	if tmpfs {
		return errNoNamespaces
	}
	return nil
}

// unmountUnder has nothing to unmount: no bundle root is a tmpfs on darwin.
func unmountUnder(string) error { return nil }

// WarmCgroupMigration warms nothing: cgroups are Linux's
// (cgroupwarm_linux.go).
func WarmCgroupMigration() (stop func()) { return func() {} }

// BelowHybridUnified refuses: cgroups are Linux's.
func BelowHybridUnified(func(string) error) error { return errNoNamespaces }
