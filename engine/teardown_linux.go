package engine

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// mountsUnder lists mount points in this mount namespace under dir: the
// calling thread's (/proc/thread-self), which is the launcher's own on any
// goroutine that has not unshared its thread's (nsexec.GoLocked keeps those
// off the main thread, whose view /proc/self gives).
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return mountPointsUnder(f, dir)
}

// mountPointsUnder lists the mount points of the mountinfo table r under
// dir, with the table's octal escapes decoded. A malformed table lists
// nothing, as an absent one does.
func mountPointsUnder(r io.Reader, dir string) []string {
	ms, _ := mountinfo.GetMountsFromReader(r, func(m *mountinfo.Info) (skip, stop bool) {
		return !within(m.Mountpoint, dir), false
	})
	var out []string
	for _, m := range ms {
		out = append(out, m.Mountpoint)
	}
	return out
}

// rootTmpfs mounts, when tmpfs is set, a tmpfs on the bundle's root
// directory root, where WriteBundle then writes the synthesized root: the
// runtime binds it as the sandbox's read-only root, and the host's
// verification names it by this mount point (the bundle's root, an
// intended source). Nothing of it is a device or set-id (nodev, nosuid;
// noexec too would be true, but runsc fails to start a sandbox on such a
// root), and the plan's files are small: 16 MiB and 16k inodes bound it.
func rootTmpfs(root string, tmpfs bool) error {
	if !tmpfs {
		return nil
	}
	return unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m,nr_inodes=16384")
}

// unmountUnder detaches every mount below dir (a bundle's root tmpfs,
// also after a crash), the deepest first, never following a symlink at
// the last component; the rest of the path is the run directory's, which
// only root writes.
func unmountUnder(dir string) error {
	ms := mountsUnder(dir)
	for i := len(ms) - 1; i >= 0; i-- {
		if err := unix.Unmount(ms[i], unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unmount %s: %w", ms[i], err)
		}
	}
	return nil
}
