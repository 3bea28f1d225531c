package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// The finding codes of the path classes. The planner refuses binds of these
// classes and the audit reports mounts of them, both through ClassifyBind;
// audit's catalog names the same codes.
const (
	CodeSocket   = "container-socket-mounted"
	CodeHostRoot = "host-root-mounted"
	CodeHome     = "home-directory-mounted"
	CodeSystem   = "system-directory-mounted"
)

// PathClass is the class of a host path a bind would expose.
type PathClass struct {
	// Code is the finding code (CodeSocket, CodeHostRoot, CodeHome,
	// CodeSystem), or "" when the path is in none of these classes.
	Code string
	// What completes a sentence whose subject is the path: "is the home
	// directory /home/ana", "contains the container engine socket
	// /run/docker.sock". Empty with Code.
	What string
}

// Describe is the sentence about p: p followed by What.
func (c PathClass) Describe(p string) string { return p + " " + c.What }

// BindFacts is what the caller knows about a bind beyond its host path.
// The zero value is a writable bind of a path nothing is known about.
type BindFacts struct {
	// ReadOnly is true for a read-only bind.
	ReadOnly bool
	// Homes are the host's home directories (host.Homes), in addition to
	// /root and the HomeRoots' entries.
	Homes []string
	// Workspaces are the declared workspaces: a bind at or below one is in
	// no home or system class, unless the workspace itself is a home
	// directory, holds one, or is a system directory (a workspace inside a
	// home is fine; a workspace that is the home is still the home).
	Workspaces []string
	// ReadOnlyPaths are exempt like Workspaces, for read-only binds only
	// (the agent's install prefix).
	ReadOnlyPaths []string
	// RuntimeFiles are the launcher's own files (agentbox-init, the run's
	// gateway socket), matched exactly: read-only, they are in no system
	// class; the socket, root and home classes still apply.
	RuntimeFiles []string
	// Socket is true when the path is a unix socket on this host: any
	// socket may be an engine's under another name.
	Socket bool
	// SameFileAs is the engine socket the path is the same file as (a hard
	// link, found by device and inode), or "".
	SameFileAs string
}

// ClassifyBind puts host path p (absolute, symlinks resolved where the
// host is this one) in the first class that fits, in this order: container
// engine socket, host root, home directory, system directory. It is the
// one path classifier: the planner refuses what it classifies, unless the
// policy accepts the code; the audit reports it as a finding.
func ClassifyBind(p string, f BindFacts) PathClass {
	p = CleanHostPath(p)
	if what := socketClass(p, f); what != "" {
		return PathClass{CodeSocket, what}
	}
	if p == "/" {
		return PathClass{CodeHostRoot, "is the host's root directory: the whole host file system, every engine socket and home directory included"}
	}
	if declared(p, f.Workspaces, f.Homes, false) || f.ReadOnly && declared(p, f.ReadOnlyPaths, f.Homes, true) {
		// A declared path is still refused where it exposes credentials.
		if what := secretClass(p, f.Homes, f.ReadOnly); what != "" {
			return PathClass{CodeHome, what}
		}
		return PathClass{}
	}
	if home, rel, ok := homeOf(p, f.Homes); ok {
		return PathClass{CodeHome, homeWhat(home, rel, f.ReadOnly)}
	}
	if dir, ok := systemDirOf(p); ok && !(f.ReadOnly && (HarmlessReadOnly(p) || slices.Contains(f.RuntimeFiles, p))) {
		return PathClass{CodeSystem, systemWhat(p, dir)}
	}
	return PathClass{}
}

// CleanHostPath cleans p and spells /var/run as /run, as the lists do.
func CleanHostPath(p string) string {
	if p == "" {
		return ""
	}
	p = path.Clean(p)
	if rest, ok := strings.CutPrefix(p, "/var/run"); ok && (rest == "" || rest[0] == '/') {
		p = "/run" + rest
	}
	return p
}

// IsEngineSocket reports whether p (cleaned, /var/run spelled /run) is an
// engine socket by its path: one of EngineSockets, inside one of
// EngineSocketDirs, or a *.sock named with one of EngineSocketWords.
func IsEngineSocket(p string) bool {
	if slices.Contains(EngineSockets, p) {
		return true
	}
	if _, ok := withinAny(p, EngineSocketDirs); ok {
		return true
	}
	base := path.Base(p)
	if !strings.HasSuffix(base, ".sock") {
		return false
	}
	for _, w := range EngineSocketWords {
		if strings.Contains(base, w) {
			return true
		}
	}
	return false
}

// HarmlessReadOnly reports whether a read-only bind of p leaks nothing: p
// is in one of CodeDirs or is (or is in) one of HarmlessFiles.
func HarmlessReadOnly(p string) bool {
	_, code := withinAny(p, CodeDirs)
	_, file := withinAny(p, HarmlessFiles)
	return code || file
}

const rootOnHost = "whoever can write to it is root on the host"

// socketClass says why p exposes a container engine, or "".
func socketClass(p string, f BindFacts) string {
	switch {
	case f.SameFileAs != "":
		return fmt.Sprintf("is the same file as the container engine socket %s: %s", f.SameFileAs, rootOnHost)
	case slices.Contains(EngineSockets, p):
		return "is a container engine socket: " + rootOnHost
	case IsEngineSocket(p):
		return "is a container engine socket by its name or directory: " + rootOnHost
	case f.Socket:
		return "is a unix socket, and any socket may be a container engine socket under another name: " + rootOnHost
	case UserRuntimeDirs.MatchString(p):
		return "holds per-user runtime sockets, rootless docker and podman among them"
	}
	if p == "/" {
		return ""
	}
	for _, s := range EngineSockets {
		// /var/lib holds the kubelet's sockets, but a bind of it is a
		// system directory already, and names that.
		if within(s, p) && !within("/var/lib", p) {
			return "contains the container engine socket " + s
		}
	}
	return ""
}

// Relations of a path to the home or system directory that classified it.
const (
	relIs       = "is"
	relInside   = "inside"
	relContains = "contains"
)

// homeOf returns the home directory p is or is inside, or the home (or
// home root) p contains, with the relation.
func homeOf(p string, homes []string) (string, string, bool) {
	for _, h := range homes {
		if h == "" || h == "/" {
			continue
		}
		if rel, ok := relation(p, h); ok {
			return h, rel, true
		}
	}
	if within(p, "/root") {
		return "/root", relOf(p, "/root"), true
	}
	for _, r := range HomeRoots {
		if rest, ok := strings.CutPrefix(p, r+"/"); ok {
			user, _, _ := strings.Cut(rest, "/")
			return r + "/" + user, relOf(p, r+"/"+user), true
		}
		if within(r, p) && p != "/" && !isSystemRoot(p) {
			return r, relOf(p, r), true
		}
	}
	return "", "", false
}

// relation is how p relates to home h: is it, is inside it, or contains
// it (unless p is a system root such as /var, which contains /var/home but
// is a system directory).
func relation(p, h string) (string, bool) {
	switch {
	case within(p, h):
		return relOf(p, h), true
	case within(h, p) && p != "/" && !isSystemRoot(p):
		return relContains, true
	}
	return "", false
}

func relOf(p, dir string) string {
	if p == dir {
		return relIs
	}
	return relInside
}

// isSystemRoot is true for a system directory itself (and /export): it may
// contain a home (/var/home) but is classified as a system directory.
func isSystemRoot(p string) bool {
	return slices.Contains(SystemDirs, p) || p == "/export"
}

func homeWhat(home, rel string, ro bool) string {
	var w string
	switch {
	case rel == relIs && slices.Contains(HomeRoots, home):
		w = "holds home directories: every home directory in it is exposed"
	case rel == relIs:
		w = "is the home directory " + home
	case rel == relContains && slices.Contains(HomeRoots, home):
		w = "contains " + home + ", which holds home directories: every home directory in it is exposed"
	case rel == relContains:
		w = "contains the home directory " + home
	default:
		w = "is inside the home directory " + home
	}
	if ro {
		w += "; read-only does not help: keys and tokens are read, not written"
	}
	return w
}

// systemDirOf returns the system directory p is or is inside: /tmp itself,
// or one of SystemDirs.
func systemDirOf(p string) (string, bool) {
	if p == SharedTmp {
		return SharedTmp, true
	}
	return withinAny(p, SystemDirs)
}

func systemWhat(p, dir string) string {
	switch p {
	case SharedTmp:
		return "is the host's shared /tmp, which holds other users' sockets (ssh-agent, X11)"
	case dir:
		return "is the system directory " + dir
	}
	return "is inside the system directory " + dir
}

// declared reports whether p is at or below one of dirs that is neither a
// home directory, nor holds one, nor is a system directory. With
// homeSystem, a directory inside a home that lies in a system directory
// (/root/.pyenv/versions/3.12.1) counts as declared too: an install
// prefix of root's, bound read-only.
func declared(p string, dirs, homes []string, homeSystem bool) bool {
	for _, d := range dirs {
		if d == "" || !within(p, d) {
			continue
		}
		_, rel, inHome := homeOf(d, homes)
		_, system := systemDirOf(d)
		if !(inHome && rel != relInside) && (!system || homeSystem && inHome) {
			return true
		}
	}
	return false
}

// secretClass says how p exposes one of HomeSecrets of the home it lies
// in (at it, inside it, or a directory of the home above it), or "".
func secretClass(p string, homes []string, ro bool) string {
	home, rel, ok := homeOf(p, homes)
	if !ok || rel != relInside {
		return ""
	}
	tail := ""
	if ro {
		tail = "; read-only does not help: keys and tokens are read, not written"
	}
	for _, s := range HomeSecrets {
		secret := path.Join(home, s)
		switch {
		case within(p, secret):
			return "is " + relName(p, secret) + secret + ", which holds credentials" + tail
		case within(secret, p):
			return "contains " + secret + ", which holds credentials" + tail
		}
	}
	return ""
}

// relName is "" for p == dir, else "inside ".
func relName(p, dir string) string {
	if p == dir {
		return ""
	}
	return "inside "
}

// withinAny returns the first of dirs that p is or is below.
func withinAny(p string, dirs []string) (string, bool) {
	for _, d := range dirs {
		if within(p, d) {
			return d, true
		}
	}
	return "", false
}
