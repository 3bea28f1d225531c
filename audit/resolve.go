package audit

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentbox/agentbox/policy"
)

// Resolve fills each host bind's HostPath (the source cleaned, /var/run read
// as /run, and symlinks evaluated where the path exists on this host),
// SameFile (the engine socket the source is the same file as, found by
// device and inode) and, for a unix socket, Grant from the socket's owner.
// Sources call it for hosts whose paths are this host's; checks never touch
// the filesystem themselves.
func (c *Container) Resolve() {
	sockets := socketInodes()
	for i := range c.Mounts {
		m := &c.Mounts[i]
		if !isHostMount(*m) {
			continue
		}
		m.HostPath = cleanPath(m.Source)
		if r, err := filepath.EvalSymlinks(m.HostPath); err == nil {
			m.HostPath = cleanPath(r)
		}
		if id, ok := inode(m.HostPath); ok && sockets[id] != m.HostPath {
			m.SameFile = sockets[id]
		}
		m.Grant = socketOwner(m.HostPath)
	}
}

type fileID struct{ dev, ino uint64 }

func inode(p string) (fileID, bool) {
	fi, err := os.Stat(p)
	if err != nil || fi.Mode()&os.ModeSocket == 0 {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

// socketInodes maps the engine sockets present on this host to their paths.
func socketInodes() map[fileID]string {
	m := map[fileID]string{}
	for _, s := range policy.EngineSockets {
		if id, ok := inode(s); ok {
			m[id] = s
		}
	}
	return m
}
