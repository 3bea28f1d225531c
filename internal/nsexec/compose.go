package nsexec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Composition lists the bind mounts that lie below another bind's
// destination (a --rw-bind inside the workspace, a protected path, the
// cover over a workspace socket). The runtime cannot make them itself: it
// mounts as the sandbox's root, which may not search a workspace that
// only its owner, or an ACL for the agent, lets in. So the helper, root in
// the runtime's own mount namespace, lays each one onto a private clone
// of its parent there, and the runtime binds the parent recursively.
// Nothing of it is visible outside that namespace, which ends with the
// runtime's create.
type Composition struct {
	Parents []Parent `json:"parents"`
}

// Parent is one bind whose source gets the nested mounts.
type Parent struct {
	// Source is the parent bind's host path (a resolved path: no symlink).
	Source string `json:"source"`
	// Mounts are laid onto it in order (a mount before those below it).
	Mounts []Nested `json:"mounts"`
}

// Nested is one mount below a Parent.
type Nested struct {
	// Source is the host path to bind.
	Source string `json:"source"`
	// Beneath, when set, is Source relative to the parent's source: the
	// source lies in the parent (agent-writable) and is opened below it,
	// never through a symlink.
	Beneath string `json:"beneath,omitempty"`
	// Target is where it goes, relative to the parent's source; it must
	// exist already (nothing is created) and is reached without a symlink.
	Target string `json:"target"`
	// ReadOnly makes the mount read-only; every nested mount is nosuid
	// and nodev.
	ReadOnly bool `json:"read_only,omitempty"`
}

// maxComposition bounds the composition file the helper reads.
const maxComposition = 4 << 20

// ReadComposition reads a composition file.
func ReadComposition(path string) (*Composition, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxComposition+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxComposition {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxComposition)
	}
	var c Composition
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// beneath resolves below a directory fd without any symlink or magic link
// and without climbing out of it.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// compose lays the composition out in this mount namespace, which it
// first makes a slave of the host's so that nothing propagates back.
func compose(path string) error {
	c, err := ReadComposition(path)
	if err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make mounts slave: %w", err)
	}
	for _, p := range c.Parents {
		if err := composeParent(p); err != nil {
			return fmt.Errorf("nested mounts of %s: %w", p.Source, err)
		}
	}
	return nil
}

// composeParent covers the parent with a non-recursive clone of itself
// (so that only the mounts below are the composition's, never a host
// mount that happened to be there) and attaches each nested mount to it.
func composeParent(p Parent) error {
	pfd, err := unix.Openat2(unix.AT_FDCWD, p.Source, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer unix.Close(pfd)
	root, err := attachClone(pfd, pfd, nil)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	for _, n := range p.Mounts {
		if err := attachNested(root, n); err != nil {
			return fmt.Errorf("%s: %w", n.Target, err)
		}
	}
	return nil
}

func attachNested(root int, n Nested) error {
	src, err := openSource(root, n)
	if err != nil {
		return fmt.Errorf("source %s: %w", n.Source, err)
	}
	defer unix.Close(src)
	dst, err := unix.Openat2(root, n.Target, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: beneath})
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer unix.Close(dst)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if n.ReadOnly {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	tree, err := attachClone(src, dst, &attr)
	if err != nil {
		return err
	}
	return unix.Close(tree)
}

func openSource(root int, n Nested) (int, error) {
	if n.Beneath != "" {
		return unix.Openat2(root, n.Beneath, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: beneath})
	}
	return unix.Openat2(unix.AT_FDCWD, n.Source, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
}

// attachClone clones the mount at src (not what is mounted below it),
// sets attr on the clone (nil keeps the source's flags: the parent's are
// the runtime's to set, and a flag set here would be locked in the
// sandbox's namespace, beyond the runtime's remount) and attaches it at
// dst; it returns the attached clone's fd.
func attachClone(src, dst int, attr *unix.MountAttr) (int, error) {
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return -1, fmt.Errorf("clone (open_tree needs Linux 5.2): %w", err)
	}
	if attr != nil {
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, attr); err != nil {
			unix.Close(tree)
			return -1, fmt.Errorf("set flags (mount_setattr needs Linux 5.12): %w", err)
		}
	}
	if err := unix.MoveMount(tree, "", dst, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		unix.Close(tree)
		return -1, fmt.Errorf("attach: %w", err)
	}
	return tree, nil
}
