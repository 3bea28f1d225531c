package userengine

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
)

// MakeHome makes the run's fresh home, home (ACCOUNT_HOME/runs/RUN, see
// policy.UserRunHome), owned by uid and gid with mode 0700, and tmp in it.
// The account owns ACCOUNT_HOME, so every step goes through a descriptor
// opened without following symlinks; runs is root's (mode 0711), so the
// account cannot swap it between runs.
func MakeHome(home string, uid, gid uint32) error {
	runs := filepath.Dir(home)
	top, err := unix.Open(filepath.Dir(runs), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the account's home %s: %w (agentbox setup-user makes it)", filepath.Dir(runs), err)
	}
	defer unix.Close(top)
	if err := unix.Mkdirat(top, "runs", 0o711); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("make %s: %w", runs, err)
	}
	rd, err := openOwnDir(top, "runs", 0)
	if err != nil {
		return fmt.Errorf("%s: %w", runs, err)
	}
	defer unix.Close(rd)
	if err := unix.Mkdirat(rd, filepath.Base(home), 0o700); err != nil {
		return fmt.Errorf("make %s: %w", home, err)
	}
	hd, err := openOwnDir(rd, filepath.Base(home), 0)
	if err != nil {
		return err
	}
	defer unix.Close(hd)
	if err := unix.Mkdirat(hd, "tmp", 0o700); err != nil {
		return fmt.Errorf("make %s/tmp: %w", home, err)
	}
	if err := unix.Fchownat(hd, "tmp", int(uid), int(gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	return unix.Fchown(hd, int(uid), int(gid))
}

// openOwnDir opens name below dir without following a symlink and checks
// that owner owns it.
func openOwnDir(dir int, name string, owner uint32) (int, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Uid != owner {
		unix.Close(fd)
		if err == nil {
			err = fmt.Errorf("%s is owned by uid %d, not %d", name, st.Uid, owner)
		}
		return -1, err
	}
	return fd, nil
}

// removeHome removes the run's home and everything the agent left in it.
func removeHome(home string) error {
	if home == "" {
		return nil
	}
	if err := engine.RemoveTree(home); err != nil {
		return fmt.Errorf("remove the run's home %s: %w", home, err)
	}
	return nil
}
