package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/audit"
)

// engineCgroup matches a cgroup path that a container engine created.
var engineCgroup = regexp.MustCompile(`(?i)(docker|kubepods|libpod|containerd|crio|lxc|podman|buildkit)`)

func gatherContainer(_ context.Context, h Host, f *Facts) {
	c := &f.Container
	if h.exists("/.dockerenv") {
		c.Markers = append(c.Markers, "/.dockerenv exists")
	}
	if s, ok := h.readString("/run/.containerenv"); ok {
		c.Evidence = append(c.Evidence, "/run/.containerenv exists"+engineName(s))
	}
	if s, ok := h.readString("/run/systemd/container"); ok {
		c.Evidence = append(c.Evidence, "/run/systemd/container names "+strconv.Quote(s))
	}
	if s, ok := h.readString("/proc/1/cgroup"); ok {
		for _, line := range strings.Split(s, "\n") {
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && engineCgroup.MatchString(parts[2]) {
				c.Evidence = append(c.Evidence, "PID 1's cgroup is "+parts[2])
				break
			}
		}
	}
	b, _, _ := h.read("/proc/self/mountinfo")
	for _, m := range parseMountinfo(b) {
		if m.Point == "/" && (m.FSType == "overlay" || m.FSType == "aufs" || m.FSType == "fuse-overlayfs") {
			c.Evidence = append(c.Evidence, "the root filesystem is "+m.FSType)
		}
	}
}

// engineName reads the engine= line of /run/.containerenv.
func engineName(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "engine="); ok {
			return " (" + strings.Trim(v, `"`) + ")"
		}
	}
	return ""
}

func gatherVM(_ context.Context, h Host, f *Facts) {
	if b, ok, _ := h.read("/proc/cpuinfo"); ok {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
				f.VM.Hypervisor = contains(strings.Fields(v), "hypervisor")
				break
			}
		}
	}
	f.VM.Vendor, _ = h.readString("/sys/class/dmi/id/sys_vendor")
	f.VM.Product, _ = h.readString("/sys/class/dmi/id/product_name")
}

// gatherDocker reads the engine's socket (DOCKER_HOST when it names a unix
// socket, else /var/run/docker.sock), its group and daemon.json.
func gatherDocker(_ context.Context, h Host, f *Facts) {
	d := &f.Docker
	d.Socket = audit.DefaultSocket("docker", h.Sys.Getenv)
	_, errD := h.Sys.LookPath("dockerd")
	fi, errS := h.Sys.Stat(d.Socket)
	d.SocketFound = errS == nil
	d.Installed = errD == nil || d.SocketFound
	if d.SocketFound {
		d.SocketMode = fmt.Sprintf("%04o", fi.Mode.Perm())
		d.SocketOwner = nameOf(h, "/etc/passwd", fi.UID)
		d.SocketGroup = nameOf(h, "/etc/group", fi.GID)
		d.Members = groupMembers(h, d.SocketGroup)
	}
	b, ok, err := h.read("/etc/docker/daemon.json")
	d.ConfigFound = ok
	switch {
	case err != nil:
		d.ConfigErr = err.Error()
	case ok:
		if err := json.Unmarshal(b, &d.Config); err != nil {
			d.ConfigErr = "/etc/docker/daemon.json: " + err.Error()
		}
	}
}

// nameOf finds id's name in a passwd or group file, or the number.
func nameOf(h Host, file string, id uint32) string {
	b, _, _ := h.read(file)
	for _, line := range strings.Split(string(b), "\n") {
		p := strings.Split(line, ":")
		if len(p) >= 3 && p[2] == strconv.FormatUint(uint64(id), 10) {
			return p[0]
		}
	}
	return strconv.FormatUint(uint64(id), 10)
}

// groupMembers lists the group's members: those named in /etc/group and
// those whose primary group it is.
func groupMembers(h Host, group string) []string {
	var out []string
	gid := ""
	b, _, _ := h.read("/etc/group")
	for _, line := range strings.Split(string(b), "\n") {
		if p := strings.Split(line, ":"); len(p) == 4 && p[0] == group {
			gid = p[2]
			for _, m := range strings.Split(p[3], ",") {
				if m != "" && !contains(out, m) {
					out = append(out, m)
				}
			}
		}
	}
	b, _, _ = h.read("/etc/passwd")
	for _, line := range strings.Split(string(b), "\n") {
		if p := strings.Split(line, ":"); len(p) >= 4 && gid != "" && p[3] == gid && !contains(out, p[0]) {
			out = append(out, p[0])
		}
	}
	return out
}

func gatherPodman(ctx context.Context, h Host, f *Facts) {
	p, err := h.Sys.LookPath("podman")
	if err != nil {
		return
	}
	f.Podman.Path = p
	out, _ := h.Sys.Output(ctx, p, "--version")
	f.Podman.Version = parseRuntimeVersion(string(out))
}

// agentCLIs are the agent programs doctor looks for.
var agentCLIs = []string{"codex", "claude", "gemini", "goose", "aider", "opencode"}

// gatherAgents finds each agent CLI on PATH and reads the settings files in
// the invoking user's home with the audit's readers.
func gatherAgents(_ context.Context, h Host, f *Facts) {
	var configs []audit.AgentConfig
	if f.User.Home != "" {
		configs = audit.ScanAgentConfigs([]audit.Mount{{Type: "bind", Source: h.path(f.User.Home), Destination: f.User.Home}})
	}
	for _, name := range agentCLIs {
		a := AgentFacts{Name: name}
		a.Path, _ = h.Sys.LookPath(name)
		for _, c := range configs {
			if c.Agent == name {
				c.Path = h.hostPath(c.Path)
				a.Configs = append(a.Configs, c)
			}
		}
		if a.Path != "" || len(a.Configs) > 0 {
			f.Agents = append(f.Agents, a)
		}
	}
}
