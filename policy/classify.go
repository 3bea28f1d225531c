package policy

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// Finding codes the planner refuses on its own (DESIGN.md §5).
const (
	codeSocket   = "container-socket-mounted"
	codeHostRoot = "host-root-mounted"
	codeHome     = "home-directory-mounted"
	codeSystem   = "system-directory-mounted"
)

// SystemDirs are the host directories that are never bound from a user's
// request: at them or below them.
var SystemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
	"/root", "/run", "/sbin", "/sys", "/usr", "/var",
}

// SocketNames are the base names of container engine sockets.
var SocketNames = []string{
	"docker.sock", "podman.sock", "containerd.sock", "crio.sock", "kubelet.sock",
	"dockershim.sock", "buildkitd.sock", "cri-dockerd.sock",
}

type pathClass struct {
	code string // finding code, "" when the path is fine to bind
	what string // words for the error message
}

// classify puts a resolved path in the most specific class that fits, in
// the audit's order: socket, host root, home directory, system directory.
func (r *resolver) classify(real string) pathClass {
	switch {
	case r.isSocket(real):
		return pathClass{codeSocket, "a container engine socket (root on the host for whoever holds it)"}
	case real == "/":
		return pathClass{codeHostRoot, "the host's root directory"}
	}
	if home, ok := r.homeOf(real); ok {
		return pathClass{codeHome, "the home directory " + home + " or a directory that contains it"}
	}
	if sys, ok := under(real, SystemDirs); ok {
		return pathClass{codeSystem, "inside the system directory " + sys}
	}
	return pathClass{}
}

// homeOf reports a home directory that real is, or contains. Paths below a
// home directory are not refused here; the audit reports them.
func (r *resolver) homeOf(real string) (string, bool) {
	for _, h := range r.h.Homes {
		if h == "" || h == "/" {
			continue
		}
		if real == h || strings.HasPrefix(h, real+"/") {
			return h, true
		}
	}
	return "", false
}

func (r *resolver) isSocket(real string) bool {
	for _, n := range SocketNames {
		if filepath.Base(real) == n {
			return true
		}
	}
	fi, err := r.h.FS.Stat(real)
	return err == nil && fi.Mode.Type() == fs.ModeSocket
}

// under reports which of dirs path is equal to or below.
func under(path string, dirs []string) (string, bool) {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return d, true
		}
	}
	return "", false
}
