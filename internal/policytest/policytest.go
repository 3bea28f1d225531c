// Package policytest holds a captured host for the tests of packages that
// plan with policy.Resolve (spec's golden, the audit's agreement with the
// planner): an in-memory policy.FS and the Host of a root launcher on a
// merged-/usr host, so that those tests use the plan Resolve really makes
// instead of a hand-built copy that can drift from it. (policy's own tests
// keep a fake of their own: a test inside policy cannot import a package
// that imports policy.)
package policytest

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/policy"
)

// FS is a captured host file system: paths with their info, symlinks with
// their targets, and what PATH lookup finds. Paths are absolute and clean.
type FS struct {
	files map[string]policy.FileInfo
	links map[string]string
	path  map[string]string // command name → found path
}

var _ policy.FS = (*FS)(nil)

// NewFS returns a merged-/usr host: /bin and /lib link into /usr, sh and
// runc are installed, /home/ana belongs to uid 1000, /srv/proj to root, and
// /run/docker.sock is a socket.
func NewFS() *FS {
	f := &FS{files: map[string]policy.FileInfo{}, links: map[string]string{}, path: map[string]string{}}
	for _, d := range []string{"/", "/usr", "/usr/bin", "/usr/sbin", "/usr/lib", "/etc", "/etc/ssl", "/etc/ssl/certs", "/home", "/root", "/var", "/var/lib", "/run", "/tmp", "/opt", "/srv", "/srv/proj"} {
		f.Dir(d, 0, 0)
	}
	f.Dir("/home/ana", 1000, 1000)
	f.Link("/bin", "usr/bin")
	f.Link("/lib", "usr/lib")
	f.File("/usr/bin/sh", 0o755, 0)
	f.Command("sh", "/usr/bin/sh")
	f.File("/usr/sbin/runc", 0o755, 0)
	f.Command("runc", "/usr/sbin/runc")
	f.Set("/run/docker.sock", policy.FileInfo{Mode: fs.ModeSocket | 0o660})
	return f
}

// Dir adds a directory (mode 0755) owned by uid and gid.
func (f *FS) Dir(p string, uid, gid uint32) {
	f.files[p] = policy.FileInfo{Mode: fs.ModeDir | 0o755, UID: uid, GID: gid}
}

// File adds a regular file owned by uid (and the group of the same id).
func (f *FS) File(p string, mode fs.FileMode, uid uint32) {
	f.files[p] = policy.FileInfo{Mode: mode, UID: uid, GID: uid}
}

// Set adds p with fi as it is: a socket, a device.
func (f *FS) Set(p string, fi policy.FileInfo) { f.files[p] = fi }

// Link adds a symlink p → target.
func (f *FS) Link(p, target string) { f.links[p] = target }

// Command makes LookPath find name at p.
func (f *FS) Command(name, p string) { f.path[name] = p }

// Stat follows symlinks.
func (f *FS) Stat(p string) (policy.FileInfo, error) {
	real, err := f.EvalSymlinks(p)
	if err != nil {
		return policy.FileInfo{}, err
	}
	return f.Lstat(real)
}

// Lstat does not follow a final symlink.
func (f *FS) Lstat(p string) (policy.FileInfo, error) {
	if t, ok := f.links[p]; ok {
		return policy.FileInfo{Mode: fs.ModeSymlink | 0o777, Link: t}, nil
	}
	if fi, ok := f.files[p]; ok {
		return fi, nil
	}
	return policy.FileInfo{}, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
}

// ReadDir lists the entries directly in p, sorted by name.
func (f *FS) ReadDir(p string) ([]policy.DirEntry, error) {
	var out []policy.DirEntry
	add := func(name string, fi policy.FileInfo) {
		if filepath.Dir(name) == p && name != p {
			out = append(out, policy.DirEntry{Name: filepath.Base(name), FileInfo: fi})
		}
	}
	for name, fi := range f.files {
		add(name, fi)
	}
	for name, t := range f.links {
		add(name, policy.FileInfo{Mode: fs.ModeSymlink | 0o777, Link: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// EvalSymlinks resolves links component by component.
func (f *FS) EvalSymlinks(p string) (string, error) {
	cur := "/"
	parts := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
	for i, hops := 0, 0; i < len(parts); i++ {
		if parts[i] == "" {
			continue
		}
		next := filepath.Join(cur, parts[i])
		if t, ok := f.links[next]; ok {
			if hops++; hops > 255 {
				return "", errors.New("EvalSymlinks: too many links")
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(cur, t)
			}
			parts, i, cur = append(strings.Split(strings.Trim(t, "/"), "/"), parts[i+1:]...), -1, "/"
			continue
		}
		if _, ok := f.files[next]; !ok {
			return "", &fs.PathError{Op: "lstat", Path: next, Err: fs.ErrNotExist}
		}
		cur = next
	}
	return cur, nil
}

// ReadHead reads a captured file's contents, which this FS does not hold:
// every regular file reads as empty (no #! line, no pyvenv.cfg).
func (f *FS) ReadHead(p string, _ int) ([]byte, error) {
	fi, err := f.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode.IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("not a regular file")}
	}
	return nil, nil
}

// LookPath finds a command added with Command; a name with a slash is
// checked, not searched, as exec.LookPath does.
func (f *FS) LookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
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

// InitPath is where Host says agentbox-init lies on the host.
const InitPath = "/usr/libexec/agentbox/agentbox-init"

// Host is a root launcher on f, in /srv/proj, with agentbox-init, cgroup
// limits, Landlock, no SELinux or AppArmor, TERM=xterm and the homes /root
// and /home/ana. Its run's slot is SlotMappings'.
func Host(f *FS) policy.Host {
	return policy.Host{
		EUID: 0, Home: "/root", Homes: []string{"/root", "/home/ana"},
		Environ:  []string{"TERM=xterm", "PATH=/host/bin", "HOME=/root", "OPENAI_API_KEY=sk-not-a-secret"},
		Cwd:      "/srv/proj",
		CanLimit: true, LandlockABI: 6,
		InitPath: InitPath,
		FS:       f,
	}
}

// SlotMappings are the maps of a run's 65536-id slot at host id 100000 for
// id: 0..65535 onto 100000 upwards, except the kept ids where the agent
// keeps them (what the launcher makes from a leased slot).
func SlotMappings(id policy.Identity) (uids, gids []specs.LinuxIDMapping) {
	return around(id.UID, id.KeepUID), around(id.GID, id.KeepGID)
}

func around(id uint32, keep *uint32) []specs.LinuxIDMapping {
	const base, size = 100000, 65536
	if keep == nil {
		return []specs.LinuxIDMapping{{ContainerID: 0, HostID: base, Size: size}}
	}
	return []specs.LinuxIDMapping{
		{ContainerID: 0, HostID: base, Size: id},
		{ContainerID: id, HostID: *keep, Size: 1},
		{ContainerID: id + 1, HostID: base + id + 1, Size: size - id - 1},
	}
}
