package policy

import (
	"regexp"

	"github.com/agentbox/agentbox/policy/homesecrets"
)

// The host path lists behind ClassifyBind: one source for the planner's
// refusals, the audit's mount findings and the home list (host.Homes).

// EngineSockets are the well-known container engine socket paths, /var/run
// spelled /run. A bind of one of them, or of a directory above one, is
// container-socket-mounted.
var EngineSockets = []string{
	"/run/docker.sock",
	"/run/podman/podman.sock",
	"/run/containerd/containerd.sock",
	"/run/crio/crio.sock",
	"/run/cri-dockerd.sock",
	"/run/dockershim.sock",
	"/run/buildkit/buildkitd.sock",
	"/run/docker/containerd/containerd.sock",
	"/var/lib/kubelet/pod-resources/kubelet.sock",
	"/var/lib/kubelet/device-plugins/kubelet.sock",
}

// EngineSocketDirs hold engine sockets (containerd shim sockets under
// /run/containerd/s, runtime task dirs, kubelet plugin sockets): anything at
// or below them is an engine endpoint.
var EngineSocketDirs = []string{
	"/run/containerd",
	"/run/docker",
	"/run/podman",
	"/run/crio",
	"/run/buildkit",
	"/run/k3s/containerd",
	"/var/lib/kubelet/pod-resources",
	"/var/lib/kubelet/device-plugins",
	"/var/lib/kubelet/plugins_registry",
}

// EngineSocketWords mark a *.sock file anywhere as an engine socket under
// another name (docker.sock in a project directory, my-podman.sock).
var EngineSocketWords = []string{"docker", "podman", "containerd", "crio", "cri-o", "kubelet", "dockershim", "buildkit"}

// UserRuntimeDirs matches /run/user and a per-user runtime directory
// (/run/user/1000), which hold rootless engine sockets
// (/run/user/1000/docker.sock, …/podman/podman.sock).
var UserRuntimeDirs = regexp.MustCompile(`^/run/user(/[0-9]+)?$`)

// HomeRoots hold home directories: a bind of one exposes every home in it,
// and HomeRoot/NAME is a home although no passwd entry names it (an audited
// host's users are not this host's). /root is a home too.
var HomeRoots = []string{"/home", "/Users", "/var/home", "/export/home"}

// SystemDirs are the host's system directories: a bind of one of them, or
// of anything below one, is system-directory-mounted (unless it is a home:
// /root, a service's home in /opt; or read-only and harmless: see
// HarmlessReadOnly).
var SystemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
	"/root", "/run", "/sbin", "/snap", "/sys", "/usr", "/var",
}

// HomeSystemDirs are the system directories where an account's home is a
// person's or an application's, with keys and tokens (/root, /opt/app),
// rather than a service's placeholder (daemon's /usr/sbin, sshd's
// /run/sshd, postgres's /var/lib/postgresql).
var HomeSystemDirs = []string{"/root", "/opt"}

// ServiceHome reports whether home directory h lies in a system directory
// other than HomeSystemDirs. Such a home is left out of the home list
// (host.Homes): the system class covers it already, and listing it would
// make a read-only bind of /usr/sbin, harmless code, a home finding.
func ServiceHome(h string) bool {
	h = CleanHostPath(h)
	if _, ok := withinAny(h, HomeSystemDirs); ok {
		return false
	}
	_, ok := withinAny(h, SystemDirs)
	return ok
}

// SharedTmp is the host's /tmp: a system directory itself (it holds other
// users' sockets: ssh-agent, X11), while a directory below it is anyone's
// (every test workspace is one).
const SharedTmp = "/tmp"

// CodeDirs are the system directories that hold only programs and
// libraries: a read-only bind of them, or of anything below them, leaks
// nothing a container image does not already contain.
var CodeDirs = []string{"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt"}

// HarmlessFiles are system files commonly bound read-only that hold no
// secret and grant nothing: the usual ones, and every /etc entry agentbox's
// own default root takes from the host (HostEtc: certificates, the linker
// cache, alternatives, protocol and service tables).
var HarmlessFiles = append([]string{
	"/etc/localtime", "/etc/timezone", "/etc/resolv.conf", "/etc/hosts",
	"/etc/ssl/certs", "/etc/ca-certificates", "/etc/pki/ca-trust/extracted",
	"/usr/share/zoneinfo",
}, HostEtc...)

// PathFixes are the fixes of the path classes, one source for the planner's
// refusals and the audit catalog's Fix.
var PathFixes = map[string]string{
	CodeSocket:   "remove the socket bind (and use_api_socket, DOCKER_HOST); give the agent the agentbox gateway instead of an engine",
	CodeHostRoot: "remove the bind of /; bind only the workspace",
	CodeHome:     "remove the bind; bind only the project directory and give the agent a fresh HOME",
	CodeSystem:   "remove the bind; if one file is needed, bind that file read-only",
}

// HomeSecrets are the entries of a home directory that hold credentials
// (keys, tokens, session cookies), relative to the home. A bind at, inside
// or containing one of them exposes the credential: it is a home finding
// even when the bind is declared (an install prefix, a workspace), so that
// ~/.config, which holds ~/.config/gh, is never an install prefix. The list
// is homesecrets.List, which account.Secrets and selftest's host check read
// too.
var HomeSecrets = homesecrets.Rels()
