package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// resolveCommand finds argv[0] (on the host PATH, or inside an image root)
// and, when the host binary lives outside the directories the sandbox
// already sees (under ~/.local or ~/.nvm, say), binds its install prefix,
// and only that, read-only. A command reached through a symlink in the
// workspace that leads out of it (./script → a host program) is refused:
// the agent may have planted the link to choose what gets bound.
func (r *resolver) resolveCommand(argv []string) error {
	if r.plan.Rootfs.Image != "" {
		return r.imageCommand(argv)
	}
	found, err := r.lookPath(argv[0])
	if err != nil {
		return err
	}
	real, err := r.realPath("command", argv[0], found)
	var in *InputError
	switch {
	case errors.As(err, &in):
		return err
	case err != nil:
		return &InputError{Field: "command", Msg: fmt.Sprintf("%s: %v", found, err), Fix: "check the command's install"}
	}
	for _, p := range []string{found, real} {
		if err := r.bindInstall(p); err != nil {
			return err
		}
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

// bindInstall makes p visible inside by binding its install prefix.
func (r *resolver) bindInstall(p string) error {
	if r.visible(p) {
		return nil
	}
	prefix := installPrefix(p)
	if c := r.classifyInstall(prefix); c.Code != "" || prefix == filepath.Join(r.h.Home, ".local") {
		prefix = filepath.Dir(p)
	}
	if c := r.classifyInstall(prefix); c.Code != "" {
		return &InputError{Field: "command", Msg: fmt.Sprintf("%s lives in %s, which %s", p, prefix, c.What), Fix: "install the command under a prefix of its own (for example ~/.local/opt/NAME) or in a system directory"}
	}
	r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindInstall, Source: prefix, Destination: prefix, ReadOnly: true})
	if bin := filepath.Join(prefix, "bin"); bin == filepath.Dir(p) {
		r.bins = append(r.bins, bin)
	} else {
		r.bins = append(r.bins, filepath.Dir(p))
	}
	return nil
}

// classifyInstall classifies an install prefix as the audit does: bound
// read-only on purpose (BindFacts.ReadOnlyPaths), so a prefix inside a home
// directory is fine and the home itself, or a system directory, is not.
func (r *resolver) classifyInstall(prefix string) PathClass {
	return r.classify(prefix, BindFacts{ReadOnly: true, ReadOnlyPaths: []string{prefix}})
}

// installPrefix is the directory above a bin/ directory (~/.nvm/versions/
// node/v20 for …/v20/bin/codex), else the directory holding the file.
func installPrefix(p string) string {
	dir := filepath.Dir(p)
	if filepath.Base(dir) == "bin" {
		return filepath.Dir(dir)
	}
	return dir
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
