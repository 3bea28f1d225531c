package account

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// readACL returns the access ACL of path (not following a final symlink),
// nil when it has none.
func readACL(path string) ([]ACLEntry, error) {
	buf := make([]byte, 1024)
	for {
		n, err := unix.Lgetxattr(path, "system.posix_acl_access", buf)
		switch {
		case errors.Is(err, unix.ERANGE):
			buf = make([]byte, 2*len(buf))
			continue
		case errors.Is(err, unix.ENODATA), errors.Is(err, unix.EOPNOTSUPP):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("read ACL of %s: %w", path, err)
		}
		return ParseACL(buf[:n])
	}
}

// readExtACL has nothing to read on Linux: its ACLs are POSIX ACLs
// (readACL); extended ACLs are macOS's.
func readExtACL(string) ([]ExtACE, error) { return nil, nil }
