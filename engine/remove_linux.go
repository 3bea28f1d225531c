package engine

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// RemoveTree deletes the directory at path and everything under it, the
// way root walks any tree a sandbox could have written (walk.go): by fds,
// never following a symlink and never entering a mount point. A mount
// found under path is left, with the directories holding it, and named in
// the error; nothing on it is deleted. A path that does not exist is not an
// error.
func RemoveTree(path string) error {
	parent, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	base := filepath.Base(path)
	fd, err := unix.Openat2(parent, base, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: walkResolve})
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		return unix.Unlinkat(parent, base, 0)
	case err != nil:
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return err
	}
	w := &walker{visit: unlinkFile, leave: unlinkDir}
	w.run(fd, st)
	unix.Close(fd)
	errs := []error{w.err()}
	for _, s := range w.skipped.lines() {
		errs = append(errs, errors.New(s))
	}
	if err := unix.Unlinkat(parent, base, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		errs = append(errs, fmt.Errorf("%s: %w", path, err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

func unlinkFile(n *node) error {
	if n.isDir() || n.parent < 0 {
		return nil
	}
	return ignoreGone(unix.Unlinkat(n.parent, n.name, 0))
}

func unlinkDir(n *node) error {
	return ignoreGone(unix.Unlinkat(n.parent, n.name, unix.AT_REMOVEDIR))
}

func ignoreGone(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}
