package nsexec

import (
	"fmt"

	"golang.org/x/sys/unix"
)

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
