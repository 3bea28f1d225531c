//go:build !linux && !darwin

package account

import "fmt"

// readACL cannot read ACLs on this OS: every path is then Unknown, not
// allowed.
func readACL(path string) ([]ACLEntry, error) {
	return nil, fmt.Errorf("read ACL of %s: %w", path, ErrNotSupported)
}

// readExtACL cannot read them either.
func readExtACL(path string) ([]ExtACE, error) {
	return nil, fmt.Errorf("read ACL of %s: %w", path, ErrNotSupported)
}
