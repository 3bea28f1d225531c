package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symlinks one resolution follows, as the kernel's
// ELOOP does.
const maxLinks = 40

// errLoop is a path with too many symlinks.
var errLoop = errors.New("too many levels of symbolic links")

// realPath resolves abs (an absolute path the user gave: a bind, a
// command) the way the kernel would, one component at a time, and refuses
// it when a symlink located in the workspace takes it out of the
// workspace. Such a link may have been planted by the agent of an earlier
// run (./cache → ~/.ssh); a link outside the workspace is the user's own
// and is followed. given is the path as the user wrote it, for the error.
func (r *resolver) realPath(field, given, abs string) (string, error) {
	ws := r.plan.Workspace
	cur, rest := "/", strings.Split(abs, "/")
	var link, target string // the first link in the workspace followed
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := r.h.FS.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxLinks {
			return "", errLoop
		}
		if link == "" && ws != "" && within(next, ws) {
			link, target = next, fi.Link
		}
		if filepath.IsAbs(fi.Link) {
			cur = "/"
		}
		rest = append(strings.Split(fi.Link, "/"), rest...)
	}
	if link != "" && !within(cur, ws) {
		return "", &InputError{
			Field: field,
			Msg:   fmt.Sprintf("%s resolves through %s -> %s, a symlink in the workspace, to %s outside the workspace", given, link, target, cur),
			Fix:   "a link in the workspace may have been planted by the agent of an earlier run; name " + cur + " itself if you mean it",
		}
	}
	return cur, nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
