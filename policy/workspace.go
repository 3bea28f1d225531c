package policy

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentbox/agentbox/workspace"
)

// Mount kinds of the workspace's own paths.
const (
	// KindProtected is a protected path bound read-only over itself.
	KindProtected MountKind = "protected"
	// KindCover is an empty read-only file bound over a unix socket found
	// in the workspace, so that connecting to it is refused.
	KindCover MountKind = "cover"
)

// CoverFile is the empty file, in the bundle, bound over each socket.
const CoverFile = "socket-cover"

// landlockResolveUnixABI is the first Landlock ABI that refuses connect(2)
// to a pathname socket bound outside the sandbox's domain.
const landlockResolveUnixABI = 9

// ProtectPaths returns the protected paths of p: its own list, or
// workspace.DefaultProtect when it names none.
func (p Policy) ProtectPaths() []string {
	if p.Protect == nil {
		return workspace.DefaultProtectPaths()
	}
	return p.Protect
}

// resolveProtected binds each protected path that exists read-only over
// itself. Nothing is created to make a bind possible, and no symlink is
// followed: a path reached through one is not protected (a residual says
// so), and a .git that is a file (a worktree's "gitdir:" pointer) is
// protected itself instead of what lies below the gitdir it names.
func (r *resolver) resolveProtected() error {
	list := r.p.ProtectPaths()
	seen := map[string]bool{}
	for _, m := range r.plan.Mounts {
		seen[m.Destination] = true // a bind the user asked for wins
	}
	for _, rel := range list {
		target, link := r.protectTarget(rel)
		if link != "" {
			r.residual("protected-path-behind-symlink", fmt.Sprintf("%s is a symlink, which agentbox does not follow: %s is not read-only in the sandbox (the teardown report still lists what the agent changes there)", link, rel))
		}
		if target == "" || seen[target] {
			continue
		}
		seen[target] = true
		r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindProtected, Source: target, Destination: target, ReadOnly: true})
	}
	return nil
}

// protectTarget walks rel below the workspace without following links. It
// returns the path to bind ("" for none) and, when a symlink stopped it,
// that symlink.
func (r *resolver) protectTarget(rel string) (target, link string) {
	cur := r.plan.Workspace
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := r.h.FS.Lstat(next)
		switch {
		case err != nil:
			return "", ""
		case fi.Mode&fs.ModeSymlink != 0:
			return "", next
		case i == len(parts)-1:
			return next, ""
		case !fi.Mode.IsDir() && part == ".git" && fi.Mode.IsRegular():
			return next, ""
		case !fi.Mode.IsDir():
			return "", ""
		}
		cur = next
	}
	return "", ""
}

// coverSockets binds an empty read-only file over each pathname socket
// found in the workspace at launch: connect(2) there then fails with
// ECONNREFUSED. A socket a host program binds after launch is reachable
// unless Landlock refuses it (ABI 9, where agentbox applies Landlock); the
// plan says so as a residual.
func (r *resolver) coverSockets() error {
	if r.kubernetes() { // the pod's workspace is a volume of its own
		return nil
	}
	if r.gvisor() {
		// gVisor's Sentry refuses connect(2) to every host socket, those
		// bound after launch too (the probe workspace-socket-unreachable
		// tries one); runsc's gofer cannot bind a file over a socket.
		return nil
	}
	seen := map[string]bool{}
	for _, m := range r.plan.Mounts {
		seen[m.Destination] = true
	}
	for _, rel := range r.h.WorkspaceSockets {
		dest := filepath.Join(r.plan.Workspace, filepath.FromSlash(rel))
		if !within(dest, r.plan.Workspace) || dest == r.plan.Workspace || seen[dest] {
			continue
		}
		seen[dest] = true
		r.plan.Mounts = append(r.plan.Mounts, Mount{Kind: KindCover, Source: filepath.Join(r.bundle, CoverFile), Destination: dest, ReadOnly: true})
	}
	if r.plan.LSM.Kind != LSMNone || r.h.LandlockABI < landlockResolveUnixABI {
		r.residual("workspace-socket-after-launch", fmt.Sprintf("a unix socket that a host program binds in the workspace after launch is reachable from the sandbox: the sockets there at launch are covered, but refusing the others needs Landlock ABI %d (this kernel has %d) applied in place of an LSM label", landlockResolveUnixABI, r.h.LandlockABI))
	}
	return nil
}
