package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/nsexec"
	"github.com/agentbox/agentbox/policy"
)

// WriteBundle writes an OCI bundle into dir: config.json and a synthesized
// root holding only mount points, symlinks and the plan's small files. The
// root never holds anything of an image or the host: those arrive as
// read-only binds when the runtime mounts them.
//
// Binds below another bind's destination are not in config.json: they go
// to ComposeFile, which the runtime helper lays out (see splitNested).
func WriteBundle(dir string, s *specs.Spec, rootfs policy.Rootfs) error {
	return writeBundle(dir, s, rootfs, true, false)
}

// WriteBundle writes the bundle for r: as the package's WriteBundle for
// runc; other runtimes get every bind in config.json and make the nested
// ones themselves. (crun 1.8 clones a bind's source without what is
// mounted below it in a user namespace, "rbind" or not, so the helper's
// layout would not reach the sandbox; crun then needs the sandbox's root
// to be able to search the workspace, and fails closed where it cannot.)
//
// With RootTmpfs, as root, a synthesized root is written into a tmpfs
// mounted on the bundle's root directory (see rootTmpfs).
func (r Runtime) WriteBundle(dir string, s *specs.Spec, rootfs policy.Rootfs) error {
	tmpfs := r.RootTmpfs && r.UserNS == nil && rootfs.Image == "" && os.Geteuid() == 0
	return writeBundle(dir, s, rootfs, r.Name == "runc", tmpfs)
}

func writeBundle(dir string, s *specs.Spec, rootfs policy.Rootfs, compose, tmpfs bool) error {
	root := filepath.Join(dir, s.Root.Path)
	rs, nested := s, (*nsexec.Composition)(nil)
	if compose {
		rs, nested = splitNested(s)
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"create root", func() error { return os.MkdirAll(root, 0o755) }},
		{"root tmpfs", func() error { return rootTmpfs(root, tmpfs) }},
		{"symlinks", func() error { return writeSymlinks(root, rootfs.Symlinks) }},
		{"files", func() error { return writeFiles(dir, root, rootfs) }},
		{"socket cover", func() error { return writeCover(dir, s.Mounts) }},
		{"mount points", func() error { return makeMountPoints(root, rs.Mounts) }},
		{"nested mounts", func() error { return writeComposition(dir, nested) }},
		{"config.json", func() error { return WriteConfig(dir, rs) }},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			return fmt.Errorf("write bundle: %s: %w", st.name, err)
		}
	}
	return nil
}

func writeSymlinks(root string, links map[string]string) error {
	for _, name := range sortedKeys(links) {
		p, err := inRoot(root, name)
		if err != nil {
			return fmt.Errorf("symlink to %q: %w", links[name], err)
		}
		if err := mkdirNoFollow(root, filepath.Dir(name)); err != nil {
			return err
		}
		if err := os.Symlink(links[name], p); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes synthesized files into a synthesized root, or, for an
// image root, under dir/files from where they are bound.
func writeFiles(dir, root string, rootfs policy.Rootfs) error {
	base := root
	if rootfs.Image != "" {
		base = filepath.Join(dir, policy.FilesDir)
		if err := os.MkdirAll(base, 0o755); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(rootfs.Files) {
		if err := mkdirNoFollow(base, filepath.Dir(name)); err != nil {
			return err
		}
		p, err := inRoot(base, name)
		if err != nil {
			return fmt.Errorf("synthesized file of %d bytes: %w", len(rootfs.Files[name]), err)
		}
		if err := os.WriteFile(p, []byte(rootfs.Files[name]), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// makeMountPoints creates each destination in the synthesized root: a
// directory, or an empty file when the source is a file. A destination
// below another mount exists already in that mount's source.
func makeMountPoints(root string, mounts []specs.Mount) error {
	var done []string
	for _, m := range mounts {
		if below(m.Destination, done) {
			continue
		}
		if m.Destination == "" {
			return fmt.Errorf("the %s mount of %q has no destination inside the sandbox", orNone(m.Type), m.Source)
		}
		done = append(done, m.Destination)
		if err := makeMountPoint(root, m); err != nil {
			return fmt.Errorf("%s: %w", m.Destination, err)
		}
	}
	return nil
}

func makeMountPoint(root string, m specs.Mount) error {
	isFile := false
	if m.Type == "bind" {
		fi, err := os.Stat(m.Source)
		if err != nil {
			return fmt.Errorf("bind source: %w", err)
		}
		isFile = !fi.IsDir()
	}
	if !isFile {
		if err := mkdirNoFollow(root, m.Destination); err != nil {
			return err
		}
		return chmodTmpfsPoint(root, m)
	}
	if err := mkdirNoFollow(root, filepath.Dir(m.Destination)); err != nil {
		return err
	}
	p, err := inRoot(root, m.Destination)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|syscallNoFollow, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// chmodTmpfsPoint gives a tmpfs mount point the mode its mode= option asks
// for: runc sets a tmpfs's root to the mode of the directory it covers, so
// without this a 1777 /tmp would come out 0755.
func chmodTmpfsPoint(root string, m specs.Mount) error {
	if m.Type != "tmpfs" {
		return nil
	}
	for _, o := range m.Options {
		if v, ok := strings.CutPrefix(o, "mode="); ok {
			mode, err := strconv.ParseUint(v, 8, 32)
			if err != nil {
				return fmt.Errorf("tmpfs option %q: %w", o, err)
			}
			p, err := inRoot(root, m.Destination)
			if err != nil {
				return err
			}
			return unix.Chmod(p, uint32(mode))
		}
	}
	return nil
}

// below reports whether dest is strictly inside one of dirs.
func below(dest string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(dest, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// errEmptyPath is an in-sandbox path that is empty: a spec or rootfs that
// no plan makes.
var errEmptyPath = errors.New("the path inside the sandbox is empty")

// orNone names an empty mount type.
func orNone(t string) string {
	if t == "" {
		return "untyped"
	}
	return t
}

// inRoot joins an in-sandbox path to root; cleaning it first as an
// absolute path means ".." can never climb out of root.
func inRoot(root, name string) (string, error) {
	if name == "" {
		return "", errEmptyPath
	}
	return filepath.Join(root, filepath.Clean("/"+name)), nil
}

// mkdirNoFollow creates rel (absolute inside root) and its parents without
// ever following a symlink, so that a link in the synthesized root can
// never make agentbox create a directory on the host.
func mkdirNoFollow(root, rel string) error {
	cur := root
	for _, part := range strings.Split(filepath.Clean("/"+rel), "/") {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink in the bundle root", cur)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", cur)
		case err == nil:
			continue
		}
		if err := os.Mkdir(cur, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// WriteConfig writes s as dir/config.json, atomically and readable by
// root alone.
func WriteConfig(dir string, s *specs.Spec) error {
	data, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return err
	}
	// 0600: the agent's environment in it holds the per-run gateway token.
	return WriteFileAtomic(filepath.Join(dir, "config.json"), append(data, '\n'), 0o600)
}

// WriteFileAtomic writes data to a temporary file beside path and renames
// it into place, so that a reader never sees half a file.
func WriteFileAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
