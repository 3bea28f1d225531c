package engine

import (
	"io"
	"os"

	"github.com/moby/sys/mountinfo"
)

// mountsUnder lists mount points in this mount namespace under dir.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
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
