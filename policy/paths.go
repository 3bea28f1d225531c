package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symlinks one resolution follows, as the kernel's
// ELOOP does.
const maxLinks = 40

// errLoop is a path with too many symlinks.
var errLoop = errors.New("too many levels of symbolic links")

// realPath resolves abs (an absolute path the user gave: a bind, a
// command) the way the kernel would (walk), and refuses
// it when a symlink located in the workspace takes it out of the
// workspace. Such a link may have been planted by the agent of an earlier
// run (./cache → ~/.ssh); a link outside the workspace is the user's own
// and is followed. given is the path as the user wrote it, for the error.
func (r *resolver) realPath(field, given, abs string) (string, error) {
	ws := r.plan.Workspace
	cur, hops, err := r.walk(abs)
	if err != nil {
		return "", err
	}
	for _, h := range hops {
		if ws != "" && within(h.link, ws) {
			if !within(cur, ws) {
				return "", &InputError{
					Field: field,
					Msg:   fmt.Sprintf("%s resolves through %s -> %s, a symlink in the workspace, to %s outside the workspace", given, h.link, h.target, cur),
					Fix:   "a link in the workspace may have been planted by the agent of an earlier run; name " + cur + " itself if you mean it",
				}
			}
			break
		}
	}
	return cur, nil
}

// hop is one symlink a walk followed: where it is (its directory
// resolved) and what it says.
type hop struct{ link, target string }

// walk resolves abs the way the kernel would, one component at a time,
// and returns the result with every symlink it followed, in order.
func (r *resolver) walk(abs string) (string, []hop, error) {
	cur, rest := "/", strings.Split(abs, "/")
	var hops []hop
	for len(rest) > 0 {
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
			return "", nil, err
		}
		if fi.Mode&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if len(hops) >= maxLinks {
			return "", nil, errLoop
		}
		hops = append(hops, hop{next, fi.Link})
		if filepath.IsAbs(fi.Link) {
			cur = "/"
		}
		rest = append(strings.Split(fi.Link, "/"), rest...)
	}
	return cur, hops, nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// unusable says why a path the user gave (a workspace, a bind, a root)
// cannot be resolved, with what the error is rather than a guess: absent,
// not searchable, a symlink loop, or whatever else the system said.
// missingFix is the fix for a path that does not exist.
func (r *resolver) unusable(field, given string, err error, missingFix string) *InputError {
	at := ""
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path != given {
		at = " (at " + pe.Path + ")"
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return &InputError{Field: field, Msg: fmt.Sprintf("%s does not exist%s", given, at), Fix: missingFix}
	case errors.Is(err, fs.ErrPermission):
		return &InputError{
			Field: field, Msg: fmt.Sprintf("%s cannot be resolved: permission denied%s for uid %d", given, at, r.h.EUID),
			Fix: "let this user search every directory on the way (chmod o+x, or an ACL), or run agentbox as a user who can",
		}
	case isLoop(err):
		return &InputError{
			Field: field, Msg: fmt.Sprintf("%s cannot be resolved: too many levels of symbolic links%s", given, at),
			Fix: "a symlink on the way points back at itself; fix or remove it",
		}
	}
	return &InputError{Field: field, Msg: fmt.Sprintf("%s cannot be resolved: %v", given, err), Fix: "check the path"}
}

// isLoop reports a symlink loop: ELOOP from the kernel, errLoop from
// realPath, or path/filepath.EvalSymlinks's own count, which is a plain
// error with no identity to test but its text.
func isLoop(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, errLoop) || strings.Contains(err.Error(), "too many links")
}
