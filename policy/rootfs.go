package policy

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// HostSystemDirs are the host directories the default root binds read-only,
// or recreates as symlinks on a merged-/usr host.
var HostSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// HostEtc are the only entries of the host's /etc that reach the default
// root, read-only: certificates, the dynamic linker's cache, alternatives,
// the time zone, and the protocol and service tables. Everything else in
// /etc is synthesized (passwd, group, hosts, hostname, nsswitch.conf,
// resolv.conf) or absent.
var HostEtc = []string{
	"/etc/alternatives", "/etc/ca-certificates", "/etc/ca-certificates.conf",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
	"/etc/pki/ca-trust", "/etc/pki/tls/certs", "/etc/protocols", "/etc/services",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf",
}

// runtimeOwned are top-level paths of an image root that the sandbox
// mounts itself and never takes from the image.
var runtimeOwned = map[string]bool{"dev": true, "proc": true, "sys": true, "tmp": true, "home": true, "run": true}

func (r *resolver) resolveRootfs() error {
	if r.p.Rootfs != "" {
		return r.imageRootfs()
	}
	r.plan.Rootfs.Symlinks = map[string]string{}
	for _, d := range HostSystemDirs {
		r.systemEntry(d, KindSystem)
	}
	for _, e := range HostEtc {
		r.systemEntry(e, KindEtc)
	}
	r.plan.Rootfs.Files = r.etcFiles()
	r.tmpfsMounts()
	return nil
}

// systemEntry binds host path p read-only, or recreates it as a symlink.
func (r *resolver) systemEntry(p string, kind MountKind) {
	fi, err := r.h.FS.Lstat(p)
	switch {
	case err != nil:
		return // absent on this host
	case fi.Mode&fs.ModeSymlink != 0:
		r.plan.Rootfs.Symlinks[p] = fi.Link
	default:
		r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: kind, Source: p, Destination: p, ReadOnly: true})
	}
}

func (r *resolver) imageRootfs() error {
	root, err := r.h.FS.EvalSymlinks(r.abs(r.p.Rootfs))
	if err != nil {
		return r.unusable("rootfs", r.p.Rootfs, err, "unpack an image root there, or drop --rootfs to use the host's system directories")
	}
	entries, err := r.h.FS.ReadDir(root)
	if err != nil || len(entries) == 0 {
		return &InputError{Field: "rootfs", Msg: fmt.Sprintf("%s is not an unpacked image root (empty or unreadable)", root), Fix: "unpack an image there, for example with: docker export CONTAINER | tar -x -C DIR"}
	}
	r.plan.Rootfs = Rootfs{Image: root, Symlinks: map[string]string{}}
	for _, e := range entries {
		if err := r.imageEntry(root, e); err != nil {
			return err
		}
	}
	r.bindImageFiles(root)
	r.tmpfsMounts()
	return nil
}

func (r *resolver) imageEntry(root string, e DirEntry) error {
	dest := "/" + e.Name
	switch {
	case runtimeOwned[e.Name]:
		return nil
	case dest == r.plan.Workspace || strings.HasPrefix(r.plan.Workspace, dest+"/"):
		return &InputError{Field: "rootfs", Msg: fmt.Sprintf("the image has %s, which would hide the workspace %s", dest, r.plan.Workspace), Fix: "use a workspace outside " + dest}
	case e.Mode&fs.ModeSymlink != 0:
		r.plan.Rootfs.Symlinks[dest] = e.Link
	case e.Mode.IsDir() || e.Mode.IsRegular():
		r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindSystem, Source: filepath.Join(root, e.Name), Destination: dest, ReadOnly: true})
	}
	return nil
}

// bindImageFiles binds the synthesized /etc files over those the image has;
// an image without a given file keeps going without it.
func (r *resolver) bindImageFiles(root string) {
	files := map[string]string{}
	for dest, content := range r.etcFiles() {
		fi, err := r.h.FS.Lstat(filepath.Join(root, dest))
		if err != nil || !fi.Mode.IsRegular() {
			continue
		}
		files[dest] = content
		r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindFile, Source: r.filePath(dest), Destination: dest, ReadOnly: true})
	}
	r.plan.Rootfs.Files = files
}

// FilesDir is where, inside the bundle, files bound over an image root live.
const FilesDir = "files"

func (r *resolver) filePath(dest string) string {
	return filepath.Join(r.bundle, FilesDir, filepath.FromSlash(path.Clean(dest)))
}

func (r *resolver) tmpfsMounts() {
	r.plan.Mounts = append(r.plan.Mounts,
		Mount{Kind: KindTmpfs, Destination: "/tmp", Options: []string{"mode=1777"}},
		Mount{Kind: KindTmpfs, Destination: AgentHome, Options: []string{"mode=0700"}},
	)
}

// etcFiles synthesizes the agent's /etc. passwd and group are filled once
// the identity is known (see personalize).
func (r *resolver) etcFiles() map[string]string {
	return map[string]string{
		"/etc/hosts":         "127.0.0.1\tlocalhost " + Hostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		"/etc/hostname":      Hostname + "\n",
		"/etc/nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n",
		"/etc/resolv.conf":   "",
		"/etc/passwd":        "", // filled by personalize
		"/etc/group":         "",
	}
}
