package selftest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func boundaryProbes() []Probe {
	return []Probe{
		{
			Name: "host-home-not-mounted", Group: GroupBoundary, Expect: Deny, run: probeHostHome, shares: reading(mountTable),
			Summary: "the invoking user's real home is mounted nowhere in the sandbox",
		},
		{
			Name: "planted-secret-unreadable", Group: GroupBoundary, Expect: Deny, run: probePlantedSecret, shares: reading(mountTable),
			Summary: "canary files and the canary variable planted outside are seen nowhere",
		},
		{
			Name: "container-socket-absent", Group: GroupBoundary, Expect: Deny, run: probeContainerSocket, shares: reading(mountTable),
			Summary: "no docker, podman, containerd, cri-o, buildkit or kubelet socket is reachable",
		},
		{
			Name: "environment-is-clean", Group: GroupBoundary, Expect: Deny, run: probeEnvironment,
			Summary: "no credential-shaped variable but the allowed ones",
		},
		{
			Name: "internet-unreachable", Group: GroupBoundary, Expect: Deny, run: probeInternet, shares: reading(traceTarget | loopbackTCP),
			Summary: "outside addresses have no route, so no packet leaves",
		},
		{
			Name: "gateway-reachable", Group: GroupBoundary, Expect: Allow, run: probeGateway, shares: gatewayShares,
			Summary: "positive control: the gateway, or a loopback listener, answers",
		},
	}
}

// gatewayShares: the gateway is reached through init's bridge (the ptrace
// target's run state); without a gateway, the loopback control listens on
// the sandbox's loopback.
func gatewayShares(e *Env) (changes, reads resource) {
	if e.Config.Targets.Gateway == "" {
		return loopbackTCP, traceTarget
	}
	return 0, traceTarget
}

// visibleAt returns where mounts show hp: the inside paths at which hp itself
// is visible, and the mount points that show a part of it.
func visibleAt(mounts []Mount, hp HostPath) (whole, part []string) {
	for _, m := range mounts {
		if m.Dev != hp.Dev || hp.FSPath == "" {
			continue
		}
		switch {
		case within(hp.FSPath, m.Root):
			rel := strings.TrimPrefix(path.Clean(hp.FSPath), path.Clean(m.Root))
			whole = append(whole, path.Join(m.MountPoint, rel))
		case within(m.Root, hp.FSPath):
			part = append(part, m.MountPoint)
		}
	}
	return whole, part
}

// sameFile reports whether name, inside, is hp: same device and inode.
func sameFile(name string, hp HostPath) bool {
	var st unix.Stat_t
	if hp.Ino == 0 || unix.Stat(name, &st) != nil {
		return false
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
	return dev == hp.Dev && st.Ino == hp.Ino
}

// installBind reports whether the mount at p is one of the plan's
// read-only install binds.
func installBind(mounts []Mount, p string, installs []string) bool {
	if !slices.Contains(installs, p) {
		return false
	}
	for _, m := range mounts {
		if m.MountPoint == p && !m.hasOption("ro") {
			return false
		}
	}
	return true
}

func probeHostHome(e *Env) outcome {
	homes := e.Config.Canaries.HostHome
	if len(homes) == 0 {
		return outcome{
			target: "host home", decision: Unknown, observed: "no-canary",
			detail: "the launcher named no host home directory (InitConfig.canaries.host_home)",
		}
	}
	mounts, err := e.readMounts()
	if err != nil {
		return outcome{target: homes[0].Path, decision: Unknown, observed: "mountinfo-unreadable", detail: err.Error()}
	}
	var w worst
	for _, h := range homes {
		whole, part := visibleAt(mounts, h)
		for _, p := range whole {
			w.add(Allow, "mounted", fmt.Sprintf("host home %s is visible at %s", h.Path, p))
		}
		for _, p := range part {
			if installBind(mounts, p, e.Config.Canaries.HomeInstalls) {
				w.add(Deny, "not-mounted", fmt.Sprintf("%s of host home %s is bound read-only at %s, as the command's closure (installs only)", p, h.Path, p))
				continue
			}
			w.add(Allow, "mounted", fmt.Sprintf("part of host home %s is mounted at %s", h.Path, p))
		}
		if sameFile(h.Path, h) {
			w.add(Allow, "visible", fmt.Sprintf("%s is the host's directory (same device and inode)", h.Path))
		}
		w.add(Deny, "not-mounted", fmt.Sprintf("no mount shows %s (%s %s)", h.Path, h.Dev, h.FSPath))
	}
	return w.outcome(homes[0].Path)
}

func probePlantedSecret(e *Env) outcome {
	c := e.Config.Canaries
	if len(c.Files) == 0 && c.EnvName == "" {
		return outcome{
			target: "canaries", decision: Unknown, observed: "no-canary",
			detail: "the launcher planted no canary (InitConfig.canaries.files, env_name)",
		}
	}
	var w worst
	checkCanaryFiles(e, &w)
	checkCanaryEnv(e, &w)
	target := c.EnvName
	if len(c.Files) > 0 {
		target = c.Files[0].Path
	}
	return w.outcome(target)
}

func checkCanaryFiles(e *Env, w *worst) {
	c := e.Config.Canaries
	if len(c.Files) == 0 {
		return
	}
	mounts, err := e.readMounts()
	if err != nil {
		w.add(Unknown, "mountinfo-unreadable", err.Error())
	}
	for _, f := range c.Files {
		whole, _ := visibleAt(mounts, f)
		for _, p := range append([]string{f.Path}, whole...) {
			d, o := readCanary(p, c.FileSHA256)
			w.add(d, o, fmt.Sprintf("canary %s at %s: %s", f.Path, p, o))
		}
	}
}

// readCanary reads at most 1 MiB of name and compares its digest to want.
func readCanary(name, want string) (Decision, string) {
	f, err := os.Open(name)
	if err == nil {
		var b []byte
		b, err = io.ReadAll(io.LimitReader(f, 1<<20))
		f.Close()
		switch {
		case err != nil:
		case want == "":
			return Unknown, "readable-unverified"
		case digestMatches(b, want):
			return Allow, "readable"
		default:
			return Deny, "other-content"
		}
	}
	return decideRead(err)
}

func checkCanaryEnv(e *Env, w *worst) {
	c := e.Config.Canaries
	if c.EnvName == "" {
		return
	}
	found := false
	for _, kv := range e.Environ {
		name, val, _ := strings.Cut(kv, "=")
		switch {
		case name == c.EnvName:
			w.add(Allow, "env-present", "the canary variable "+name+" is set")
			found = true
		case digestMatches([]byte(val), c.EnvSHA256):
			w.add(Allow, "env-value-present", "the canary variable's value is in "+name)
			found = true
		}
	}
	if !found {
		w.add(Deny, "absent", "neither the canary variable nor its value is in the environment")
	}
}

// socketNames are the basenames of container-engine API sockets.
var socketNames = []string{
	"docker.sock", "dockershim.sock", "containerd.sock", "podman.sock",
	"crio.sock", "buildkitd.sock", "kubelet.sock", "cri-dockerd.sock", "k3s.sock",
}

// socketDirs are the engines' state directories; a mount of one exposes its socket.
var socketDirs = []string{
	"/run/docker", "/var/run/docker", "/run/containerd", "/var/run/containerd",
	"/run/podman", "/run/crio", "/var/run/crio", "/run/buildkit", "/var/lib/kubelet", "/var/lib/docker", "/run/k3s",
}

// socketPaths returns where the sweep looks for engine sockets.
func socketPaths(environ []string) []string {
	paths := []string{
		"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock", "/var/run/podman/podman.sock",
		"/run/containerd/containerd.sock", "/var/run/containerd/containerd.sock",
		"/run/crio/crio.sock", "/var/run/crio/crio.sock", "/run/buildkit/buildkitd.sock",
		"/run/k3s/containerd/containerd.sock", "/var/lib/kubelet/pod-resources/kubelet.sock",
		"/run/cri-dockerd.sock", "/run/dockershim.sock",
	}
	for _, pattern := range []string{"/run/user/*/docker.sock", "/run/user/*/podman/podman.sock", "/run/user/*/containerd/containerd.sock"} {
		m, _ := filepath.Glob(pattern)
		paths = append(paths, m...)
	}
	for _, kv := range environ {
		if dir, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok && dir != "" {
			paths = append(paths, filepath.Join(dir, "docker.sock"), filepath.Join(dir, "podman", "podman.sock"))
		}
		if host, ok := strings.CutPrefix(kv, "DOCKER_HOST=unix://"); ok {
			paths = append(paths, host)
		}
	}
	return paths
}

func probeContainerSocket(e *Env) outcome {
	var w worst
	for _, p := range socketPaths(e.Environ) {
		d, o := checkSocketPath(p)
		if d != Deny || o != "absent" {
			w.add(d, o, p+": "+o)
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.Proc, "net", "unix")); err != nil {
		w.add(Unknown, "proc-net-unix-unreadable", err.Error())
	} else {
		for _, p := range parseUnixPaths(b) {
			if slices.Contains(socketNames, path.Base(p)) {
				w.add(Allow, "listed", p+" is bound in this network namespace")
			}
		}
	}
	if mounts, err := e.readMounts(); err != nil {
		w.add(Unknown, "mountinfo-unreadable", err.Error())
	} else {
		for _, m := range mounts {
			if socketMount(m) {
				w.add(Allow, "mounted", fmt.Sprintf("%s is mounted from %s", m.MountPoint, m.Root))
			}
		}
	}
	w.otherwise("absent", "no engine socket in the path sweep, /proc/net/unix or mountinfo")
	return w.outcome("engine sockets")
}

// socketMount reports whether m shows an engine socket or state directory.
func socketMount(m Mount) bool {
	for _, p := range []string{m.MountPoint, m.Root} {
		if slices.Contains(socketNames, path.Base(p)) {
			return true
		}
		for _, d := range socketDirs {
			if within(p, d) {
				return true
			}
		}
	}
	return false
}

// checkSocketPath decides one sweep path: a unix socket there is ALLOW
// ("connectable" when a connect succeeds, "present" otherwise).
func checkSocketPath(p string) (Decision, string) {
	var st unix.Stat_t
	err := unix.Stat(p, &st)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return Deny, "absent"
	case err != nil:
		d, o := decideSyscall(err)
		if d == Allow {
			return Unknown, o
		}
		return d, o
	case st.Mode&unix.S_IFMT != unix.S_IFSOCK:
		return Deny, "not-a-socket"
	}
	c, err := net.DialTimeout("unix", p, 200*time.Millisecond)
	if err != nil {
		return Allow, "present"
	}
	c.Close()
	return Allow, "connectable"
}
