package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// resolveCommand finds argv[0] (on the host PATH, or inside an image root)
// and, when the host program lives outside the directories the sandbox
// already sees (under ~/.local or ~/.nvm, say), binds its closure
// read-only (closure.go): its symlinks, its install prefix, its
// interpreters. A command reached through a symlink in the workspace that
// leads out of it (./script → a host program) is refused: the agent may
// have planted the link to choose what gets bound.
func (r *resolver) resolveCommand(argv []string) error {
	if r.plan.Rootfs.Image != "" {
		return r.imageCommand(argv)
	}
	found, err := r.lookPath(argv[0])
	if err != nil {
		return err
	}
	_, err = r.realPath("command", argv[0], found)
	var in *InputError
	switch {
	case errors.As(err, &in):
		return err
	case err != nil:
		return &InputError{Field: "command", Msg: fmt.Sprintf("%s: %v", found, err), Fix: "check the command's install"}
	}
	if err := r.bindFound("the command "+argv[0], found, 0); err != nil {
		return err
	}
	r.plan.Command = append([]string{found}, argv[1:]...)
	return nil
}

func (r *resolver) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		p := r.abs(name)
		if fi, err := r.h.FS.Stat(p); err != nil || !fi.Mode.IsRegular() || fi.Mode&0o111 == 0 {
			return "", &InputError{Field: "command", Msg: fmt.Sprintf("%s is not an executable file", name), Fix: "check the path"}
		}
		return p, nil
	}
	p, err := r.h.FS.LookPath(name)
	if err != nil {
		return "", &InputError{Field: "command", Msg: fmt.Sprintf("%q not found on PATH", name), Fix: "install it, or give its full path"}
	}
	return r.abs(p), nil
}

// classifyInstall classifies an install prefix as the audit does: bound
// read-only on purpose (BindFacts.ReadOnlyPaths), so a prefix inside a home
// directory is fine and the home itself, or a system directory, is not.
func (r *resolver) classifyInstall(prefix string) PathClass {
	return r.classify(prefix, BindFacts{ReadOnly: true, ReadOnlyPaths: []string{prefix}})
}

// visible reports whether p is inside a mount or a system symlink of the
// plan, so that the sandbox sees it without another bind.
func (r *resolver) visible(p string) bool {
	for _, m := range r.plan.Mounts {
		if m.Kind != KindTmpfs && (p == m.Destination || strings.HasPrefix(p, m.Destination+"/")) {
			return true
		}
	}
	for link := range r.plan.Rootfs.Symlinks {
		if strings.HasPrefix(p, link+"/") {
			return true
		}
	}
	return false
}

// imagePath is the PATH searched for a command inside an image root.
var imagePath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

func (r *resolver) imageCommand(argv []string) error {
	root := r.plan.Rootfs.Image
	candidates := []string{argv[0]}
	if !strings.Contains(argv[0], "/") {
		candidates = candidates[:0]
		for _, d := range imagePath {
			candidates = append(candidates, d+"/"+argv[0])
		}
	}
	for _, c := range candidates {
		if !filepath.IsAbs(c) {
			continue
		}
		if fi, err := r.h.FS.Lstat(filepath.Join(root, c)); err == nil && (fi.Mode&fs.ModeSymlink != 0 || fi.Mode&0o111 != 0) {
			r.plan.Command = append([]string{c}, argv[1:]...)
			return nil
		}
	}
	return &InputError{Field: "command", Msg: fmt.Sprintf("%q not found in the image root %s", argv[0], root), Fix: "give the command's absolute path inside the image"}
}
