package selftest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/sys/mountinfo"
)

// ParseMountinfo parses the text of /proc/<pid>/mountinfo with
// github.com/moby/sys/mountinfo: the paths (Root, MountPoint, Source) come
// out with the kernel's octal escapes (\040 for a space, \012 for a
// newline) decoded; a line without the "-" separator or with fewer than
// ten fields is an error.
func ParseMountinfo(b []byte) ([]Mount, error) {
	ms, err := mountinfo.GetMountsFromReader(bytes.NewReader(b), nil)
	if err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	var out []Mount
	for _, m := range ms {
		out = append(out, Mount{
			ID: m.ID, Parent: m.Parent, Dev: fmt.Sprintf("%d:%d", m.Major, m.Minor),
			Root: m.Root, MountPoint: m.Mountpoint, Options: m.Options, FSType: m.FSType, Source: m.Source,
		})
	}
	return out, nil
}

// readMounts reads and parses mountinfo of the calling process under proc.
func readMounts(proc string) ([]Mount, error) {
	b, err := os.ReadFile(filepath.Join(proc, "self", "mountinfo"))
	if err != nil {
		return nil, err
	}
	return ParseMountinfo(b)
}
