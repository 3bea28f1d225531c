package policy

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// fakeFS is a captured host file system: paths with their info, and
// symlinks with their targets.
type fakeFS struct {
	files map[string]FileInfo
	links map[string]string
	path  map[string]string // command name → found path
	errs  map[string]error  // path → the error reaching it fails with
	data  map[string]string // regular file → its contents (ReadHead)
}

func newFakeFS() *fakeFS {
	f := &fakeFS{files: map[string]FileInfo{}, links: map[string]string{}, path: map[string]string{}, errs: map[string]error{}, data: map[string]string{}}
	for _, d := range []string{"/", "/usr", "/usr/bin", "/usr/sbin", "/usr/lib", "/etc", "/etc/ssl", "/etc/ssl/certs", "/home", "/home/ana", "/root", "/var", "/var/run", "/run", "/tmp", "/srv"} {
		f.dir(d, 0, 0)
	}
	f.dir("/home/ana", 1000, 1000)
	f.link("/bin", "usr/bin")
	f.link("/lib", "usr/lib")
	f.link("/etc/localtime", "/usr/share/zoneinfo/Etc/UTC")
	f.file("/etc/ld.so.cache", 0o644, 0)
	f.file("/usr/bin/sh", 0o755, 0)
	f.path["sh"] = "/usr/bin/sh"
	f.files["/run/docker.sock"] = FileInfo{Mode: fs.ModeSocket | 0o660}
	return f
}

func (f *fakeFS) dir(p string, uid, gid uint32) {
	f.files[p] = FileInfo{Mode: fs.ModeDir | 0o755, UID: uid, GID: gid}
}

func (f *fakeFS) file(p string, mode fs.FileMode, uid uint32) {
	f.files[p] = FileInfo{Mode: mode, UID: uid, GID: uid}
}

func (f *fakeFS) link(p, target string) { f.links[p] = target }

// script adds a regular file with contents.
func (f *fakeFS) script(p string, mode fs.FileMode, uid uint32, contents string) {
	f.file(p, mode, uid)
	f.data[p] = contents
}

// ReadHead returns the first n bytes of a file's contents; a file added
// without contents reads as empty.
func (f *fakeFS) ReadHead(p string, n int) ([]byte, error) {
	real, err := f.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if fi, ok := f.files[real]; !ok || !fi.Mode.IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("not a regular file")}
	}
	d := f.data[real]
	return []byte(d[:min(n, len(d))]), nil
}

func (f *fakeFS) Stat(p string) (FileInfo, error) {
	real, err := f.EvalSymlinks(p)
	if err != nil {
		return FileInfo{}, err
	}
	return f.Lstat(real)
}

func (f *fakeFS) Lstat(p string) (FileInfo, error) {
	if err, ok := f.errs[p]; ok {
		return FileInfo{}, &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	if t, ok := f.links[p]; ok {
		return FileInfo{Mode: fs.ModeSymlink | 0o777, Link: t}, nil
	}
	if fi, ok := f.files[p]; ok {
		return fi, nil
	}
	return FileInfo{}, fs.ErrNotExist
}

func (f *fakeFS) ReadDir(p string) ([]DirEntry, error) {
	var out []DirEntry
	for _, m := range []map[string]FileInfo{f.files, f.linkInfos()} {
		for name, fi := range m {
			if filepath.Dir(name) == p && name != p {
				out = append(out, DirEntry{Name: filepath.Base(name), FileInfo: fi})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeFS) linkInfos() map[string]FileInfo {
	m := map[string]FileInfo{}
	for p, t := range f.links {
		m[p] = FileInfo{Mode: fs.ModeSymlink | 0o777, Link: t}
	}
	return m
}

// EvalSymlinks resolves links component by component.
func (f *fakeFS) EvalSymlinks(p string) (string, error) {
	cur := "/"
	parts := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
	for i := 0; i < len(parts); i++ {
		if parts[i] == "" {
			continue
		}
		next := filepath.Join(cur, parts[i])
		if err, ok := f.errs[next]; ok {
			return "", &fs.PathError{Op: "lstat", Path: next, Err: err}
		}
		if t, ok := f.links[next]; ok {
			if !filepath.IsAbs(t) {
				t = filepath.Join(cur, t)
			}
			rest := append(strings.Split(strings.Trim(t, "/"), "/"), parts[i+1:]...)
			parts, i, cur = rest, -1, "/"
			continue
		}
		if _, ok := f.files[next]; !ok {
			return "", fs.ErrNotExist
		}
		cur = next
	}
	return cur, nil
}

func (f *fakeFS) LookPath(name string) (string, error) {
	if strings.Contains(name, "/") { // like exec.LookPath: a path is checked, not searched
		if _, err := f.Stat(name); err != nil {
			return "", err
		}
		return name, nil
	}
	if p, ok := f.path[name]; ok {
		return p, nil
	}
	return "", errors.New("not found")
}

// testHost is a root launcher on a merged-/usr host with runc installed.
func testHost(f *fakeFS) Host {
	f.file("/usr/sbin/runc", 0o755, 0)
	f.path["runc"] = "/usr/sbin/runc"
	return Host{
		EUID: 0, Home: "/root", Homes: []string{"/root", "/home/ana"},
		Environ: []string{"TERM=xterm", "LANG=C.UTF-8", "LC_ALL=C", "OPENAI_API_KEY=sk-secret", "PATH=/host/bin", "HOME=/root", "AWS_SECRET_ACCESS_KEY=x"},
		Cwd:     "/srv/proj", CanLimit: true, FS: f, LandlockABI: 9,
	}
}
