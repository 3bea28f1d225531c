//go:build linux

package main

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/selftest"
)

// protectWorkspace makes each bind of p read-only in this process's mount
// namespace, which must be its own (spawn unshares it, and Go makes "/"
// recursively private there, so nothing propagates back to the host). It
// runs as root, before the child becomes the agent: --isolation user has no
// runtime to make the plan's protected and cover mounts.
//
// The workspace is attacker-written: each path is opened below the
// workspace with openat2 (RESOLVE_BENEATH, no symlink, no magic link), and
// the mount is made on that descriptor (open_tree, mount_setattr,
// move_mount), so that no path is resolved twice. A path that is gone is
// skipped, as the runtime binds only the paths there at the plan; one that
// became a symlink refuses the start. Each bind is then checked read-only.
// The agent, without CAP_SYS_ADMIN, can neither unmount nor remount them,
// nor unlink or rename a mount point (EBUSY).
func protectWorkspace(p *selftest.Protect) error {
	if p == nil || len(p.Binds) == 0 {
		return nil
	}
	root, err := unix.Open(p.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the workspace %s: %w", p.Workspace, err)
	}
	defer unix.Close(root)
	for _, b := range p.Binds {
		if err := protectOne(root, b); err != nil {
			return fmt.Errorf("protect %s: %w", b.Path, err)
		}
	}
	return nil
}

// beneath opens rel below root as an O_PATH descriptor; a symlink anywhere
// on the way, the last component included, is ELOOP (RESOLVE_NO_SYMLINKS:
// O_NOFOLLOW would open the last one itself, to be bound over).
func beneath(root int, rel string) (int, error) {
	return unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

func protectOne(root int, b selftest.ProtectBind) error {
	target, err := beneath(root, b.Path)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open below the workspace: %w", err)
	}
	defer unix.Close(target)
	src := target
	if b.Source != "" {
		if src, err = unix.Open(b.Source, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
			return fmt.Errorf("open %s: %w", b.Source, err)
		}
		defer unix.Close(src)
	}
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("mount_setattr read-only: %w", err)
	}
	if err := unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	// Reopened, the path is the new mount's root: it must be read-only.
	check, err := beneath(root, b.Path)
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer unix.Close(check)
	var st unix.Statfs_t
	if err := unix.Fstatfs(check, &st); err != nil {
		return fmt.Errorf("statfs: %w", err)
	}
	if st.Flags&unix.ST_RDONLY == 0 {
		return errors.New("the bind is not read-only")
	}
	return nil
}
