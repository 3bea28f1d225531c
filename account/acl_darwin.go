package account

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// readACL has nothing to read on macOS: it has no POSIX ACLs; its ACLs
// are extended ACLs (readExtACL).
func readACL(string) ([]ACLEntry, error) { return nil, nil }

// readExtACL reads path's extended ACL through /bin/ls -led (no cgo: the
// acl_get_link_np call is libc's). A path with a newline is refused: its
// listing could not be told from the entries. Cross-compiled only: it has
// never run on a Mac.
func readExtACL(path string) ([]ExtACE, error) {
	if strings.ContainsAny(path, "\n\r") {
		return nil, fmt.Errorf("read ACL of %q: %w: a newline in the path", path, ErrBadExtACL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := output(ctx, LsACLArgv(path))
	if err != nil {
		return nil, fmt.Errorf("read ACL of %s: %w", path, err)
	}
	return ParseLsACL(out)
}
