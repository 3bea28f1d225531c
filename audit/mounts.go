package audit

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/agentbox/agentbox/policy"
)

// engineSockets are the well-known engine socket paths, /var/run spelled
// /run. A bind of one of them, of a directory above one, or a mount at one of
// them inside the container, is container-socket-mounted.
var engineSockets = []string{
	"/run/docker.sock",
	"/run/podman/podman.sock",
	"/run/containerd/containerd.sock",
	"/run/crio/crio.sock",
	"/run/cri-dockerd.sock",
	"/run/dockershim.sock",
	"/run/docker/containerd/containerd.sock",
	"/var/lib/kubelet/pod-resources/kubelet.sock",
	"/var/lib/kubelet/device-plugins/kubelet.sock",
}

// engineDirs hold engine sockets (containerd shim sockets under
// /run/containerd/s, runtime task dirs, kubelet plugin sockets): anything at
// or below them is an engine endpoint.
var engineDirs = []string{
	"/run/containerd",
	"/run/docker",
	"/run/podman",
	"/run/crio",
	"/run/k3s/containerd",
	"/var/lib/kubelet/pod-resources",
	"/var/lib/kubelet/device-plugins",
	"/var/lib/kubelet/plugins_registry",
}

// engineWords mark a *.sock file as an engine socket under another name.
var engineWords = []string{"docker", "podman", "containerd", "crio", "cri-o", "kubelet", "dockershim"}

// rootlessRun matches a per-user runtime dir, which holds rootless engine
// sockets (/run/user/1000/docker.sock, …/podman/podman.sock).
var rootlessRun = regexp.MustCompile(`^/run/user(/[0-9]+)?$`)

// homeRoots hold home directories; a bind of one of them exposes every home.
var homeRoots = []string{"/home", "/Users", "/var/home", "/export/home"}

// systemDirs are the host system directories (and everything below them).
var systemDirs = []string{
	"/etc", "/var", "/usr", "/root", "/boot", "/proc", "/sys", "/dev", "/run",
	"/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt", "/snap",
}

// codeDirs are system directories that hold only code: a read-only bind of
// them leaks nothing a container image does not already contain.
var codeDirs = []string{"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt"}

// harmlessFiles are system files commonly bound read-only that hold no
// secret and grant nothing: the usual ones, and every /etc entry agentbox's
// own default root takes from the host (policy.HostEtc: certificates, the
// linker cache, alternatives, protocol and service tables).
var harmlessFiles = append([]string{
	"/etc/localtime", "/etc/timezone", "/etc/resolv.conf", "/etc/hosts",
	"/etc/ssl/certs", "/etc/ca-certificates", "/etc/pki/ca-trust/extracted",
	"/usr/share/zoneinfo",
}, policy.HostEtc...)

// checkMounts classifies each mount once, by the first code that fits:
// socket, host root, home directory, system directory, extra writable mount.
func checkMounts(c *Container, o *Options) []Finding {
	var out []Finding
	for _, m := range c.Mounts {
		if f, ok := classifyMount(m, o); ok {
			if f.File == "" {
				f.Location = c.keyLocation("volumes")
			}
			out = append(out, f)
		}
	}
	if c.APISocket {
		out = append(out, newFinding(CodeContainerSocket, "use_api_socket",
			"use_api_socket binds the engine's API socket into the container",
			c.keyLocation("use_api_socket")))
	}
	return out
}

func classifyMount(m Mount, o *Options) (Finding, bool) {
	subject := mountSubject(m)
	f := func(code, detail string) (Finding, bool) {
		fd := newFinding(code, subject, detail, m.Location)
		fd.Evidence = mountEvidence(m)
		return fd, true
	}
	if dst := cleanPath(m.Destination); isEngineSocket(dst) && m.Type != "tmpfs" {
		return f(CodeContainerSocket, fmt.Sprintf("%s is where clients look for an engine socket, and something is mounted there", m.Destination))
	}
	if !isHostMount(m) {
		if writable(m) && m.Type == "volume" {
			return f(CodeExtraWritable, "a named or anonymous volume is writable and outlives the container")
		}
		return Finding{}, false
	}
	p := m.hostPath()
	if why := socketReason(p, m.SameFile); why != "" {
		return f(CodeContainerSocket, why)
	}
	if p == "/" {
		return f(CodeHostRoot, "the whole host filesystem is bound in, every engine socket and home directory included")
	}
	if declared(p, o.Workspaces, o) || m.ReadOnly && declared(p, o.ReadOnlyPaths, o) {
		return Finding{}, false
	}
	if home, ok := homeOf(p, o); ok {
		return f(CodeHomeDirectory, homeDetail(p, home, m.ReadOnly))
	}
	if dir, ok := systemDirOf(p); ok && !(m.ReadOnly && (harmlessSystem(p) || slices.Contains(o.RuntimeFiles, p))) {
		fd, _ := f(CodeSystemDirectory, systemDetail(p, dir, m.ReadOnly))
		if m.ReadOnly {
			fd.Severity = Medium
		}
		return fd, true
	}
	if writable(m) && !isWorkspace(p, o) {
		return f(CodeExtraWritable, "a host directory is writable and it is not the declared workspace")
	}
	return Finding{}, false
}

// isHostMount reports whether m exposes a host path.
func isHostMount(m Mount) bool {
	return (m.Type == "bind" || m.Type == "") && strings.HasPrefix(m.Source, "/")
}

func writable(m Mount) bool { return !m.ReadOnly }

// hostPath is the mount's host path, cleaned and resolved where possible.
func (m Mount) hostPath() string {
	if m.HostPath != "" {
		return m.HostPath
	}
	return cleanPath(m.Source)
}

// isEngineSocket reports whether p is an engine socket or inside a directory
// that holds only engine sockets.
func isEngineSocket(p string) bool {
	for _, s := range engineSockets {
		if p == s {
			return true
		}
	}
	for _, d := range engineDirs {
		if under(p, d) {
			return true
		}
	}
	base := path.Base(p)
	if !strings.HasSuffix(base, ".sock") {
		return false
	}
	for _, w := range engineWords {
		if strings.Contains(base, w) {
			return true
		}
	}
	return false
}

// socketReason says why host path p exposes an engine, or "".
func socketReason(p, sameFile string) string {
	switch {
	case sameFile != "":
		return fmt.Sprintf("the source is the same file as the engine socket %s", sameFile)
	case isEngineSocket(p):
		return "an engine socket gives whoever can write to it root on the host"
	case rootlessRun.MatchString(p):
		return fmt.Sprintf("%s holds per-user runtime sockets, rootless docker and podman among them", p)
	}
	if p != "/" {
		for _, s := range engineSockets {
			if under(s, p) && !under("/var/lib", p) {
				return fmt.Sprintf("%s contains the engine socket %s", p, s)
			}
		}
	}
	return ""
}

// homeOf returns the home directory p is in, or the home root p contains.
func homeOf(p string, o *Options) (string, bool) {
	for _, h := range o.HomeDirs {
		if h != "/" && (under(p, h) || under(h, p) && p != "/" && !isSystemRoot(p)) {
			return h, true
		}
	}
	if under(p, "/root") {
		return "/root", true
	}
	for _, r := range homeRoots {
		if p == r || under(r, p) && p != "/" && !isSystemRoot(p) {
			return r, true
		}
		if under(p, r) {
			rest := strings.TrimPrefix(p, r+"/")
			user, _, _ := strings.Cut(rest, "/")
			return r + "/" + user, true
		}
	}
	return "", false
}

// isSystemRoot is true for /var: it contains /var/home but is classified as
// a system directory.
func isSystemRoot(p string) bool {
	for _, d := range systemDirs {
		if p == d {
			return true
		}
	}
	return p == "/export"
}

func homeDetail(p, home string, ro bool) string {
	d := fmt.Sprintf("%s is inside the home directory %s", p, home)
	if p == home {
		d = fmt.Sprintf("the home directory %s is bound in", home)
	} else if under(home, p) {
		d = fmt.Sprintf("%s contains the home directories", p)
	}
	if ro {
		d += "; read-only does not help: keys and tokens are read, not written"
	}
	return d
}

func systemDirOf(p string) (string, bool) {
	if p == "/tmp" {
		return "/tmp", true
	}
	for _, d := range systemDirs {
		if under(p, d) {
			return d, true
		}
	}
	return "", false
}

// harmlessSystem reports whether a read-only bind of p leaks nothing.
func harmlessSystem(p string) bool {
	for _, d := range codeDirs {
		if under(p, d) {
			return true
		}
	}
	for _, f := range harmlessFiles {
		if under(p, f) {
			return true
		}
	}
	return false
}

func systemDetail(p, dir string, ro bool) string {
	mode := "writable"
	if ro {
		mode = "read-only"
	}
	if p == "/tmp" {
		return "the host's /tmp is bound in " + mode + "; it holds other users' sockets (ssh-agent, X11)"
	}
	return fmt.Sprintf("%s is a host system path (under %s), bound %s", p, dir, mode)
}

// declared reports whether p is at or below one of dirs (the declared
// workspaces, or the declared read-only paths) that is neither a home
// directory, nor holds one, nor is a system directory: a workspace inside a
// home is fine, a workspace that is the home is still the home.
func declared(p string, dirs []string, o *Options) bool {
	for _, d := range dirs {
		if !under(p, d) {
			continue
		}
		h, inHome := homeOf(d, o)
		_, system := systemDirOf(d)
		if !(inHome && (d == h || under(h, d))) && !system {
			return true
		}
	}
	return false
}

func isWorkspace(p string, o *Options) bool {
	for _, w := range o.Workspaces {
		if under(p, w) {
			return true
		}
	}
	return false
}

func mountSubject(m Mount) string {
	src := m.Source
	if src == "" {
		src = "(anonymous " + m.Type + ")"
	}
	return src + " -> " + m.Destination
}

func mountEvidence(m Mount) string {
	mode := "rw"
	if m.ReadOnly {
		mode = "ro"
	}
	e := fmt.Sprintf("%s %s -> %s (%s)", orDefault(m.Type, "bind"), orDefault(m.Source, "-"), m.Destination, mode)
	if hp := m.hostPath(); m.HostPath != "" && hp != cleanPath(m.Source) {
		e += "; resolves to " + hp
	}
	return e
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
