//go:build !linux

package account

import "fmt"

// readACL cannot read ACLs here: macOS ACLs are not POSIX ACLs, and reading
// them needs acl_get_link_np (cgo). Every path is then Unknown, not allowed.
func readACL(path string) ([]ACLEntry, error) {
	return nil, fmt.Errorf("read ACL of %s: %w", path, ErrNotSupported)
}
