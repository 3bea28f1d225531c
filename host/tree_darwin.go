package host

import (
	"errors"

	"github.com/moby/sys/mountinfo"
)

// Mounts refuses on darwin: /proc/self/mountinfo is Linux's.
func (t Tree) Mounts() ([]*mountinfo.Info, error) {
	return nil, errors.New("read mount table: /proc/self/mountinfo is Linux's; this host is darwin")
}
