package host

import (
	"fmt"
	"os"

	"github.com/moby/sys/mountinfo"
)

// Mounts reads the tree's /proc/self/mountinfo with
// github.com/moby/sys/mountinfo (on this machine, the mounts of this
// process's namespace).
func (t Tree) Mounts() ([]*mountinfo.Info, error) {
	f, err := os.Open(t.path("/proc/self/mountinfo"))
	if err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	defer f.Close()
	ms, err := mountinfo.GetMountsFromReader(f, nil)
	if err != nil {
		return nil, fmt.Errorf("/proc/self/mountinfo: %w", err)
	}
	return ms, nil
}
