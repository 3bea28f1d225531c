package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/moby/sys/user"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/host"
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
	ms, _ := h.tree().Mounts() // an unreadable table is no evidence
	for _, m := range ms {
		if m.Mountpoint == "/" && (m.FSType == "overlay" || m.FSType == "aufs" || m.FSType == "fuse-overlayfs") {
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
		d.SocketOwner = userName(h, fi.UID)
		d.SocketGroup = groupName(h, fi.GID)
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

// The socket's owner and group, and the group's members, are looked up
// with github.com/moby/sys/user, leniently: they only name people in a
// report (the id databases that decide allocation are userns's, strict).

// userName finds uid's name in the passwd file, or the number.
func userName(h Host, uid uint32) string {
	us, _ := user.ParsePasswdFilter(h.reader("/etc/passwd"), func(u user.User) bool {
		return host.IsAccount(u.Name) && u.Uid >= 0 && uint64(u.Uid) == uint64(uid)
	})
	if len(us) > 0 {
		return us[0].Name
	}
	return strconv.FormatUint(uint64(uid), 10)
}

// groupName finds gid's name in the group file, or the number.
func groupName(h Host, gid uint32) string {
	gs, _ := user.ParseGroupFilter(h.reader("/etc/group"), func(g user.Group) bool {
		return host.IsAccount(g.Name) && g.Gid >= 0 && uint64(g.Gid) == uint64(gid)
	})
	if len(gs) > 0 {
		return gs[0].Name
	}
	return strconv.FormatUint(uint64(gid), 10)
}

// groupMembers lists the group's members: those named in /etc/group and
// those whose primary group it is.
func groupMembers(h Host, group string) []string {
	gs, _ := user.ParseGroupFilter(h.reader("/etc/group"), func(g user.Group) bool {
		return host.IsAccount(g.Name) && g.Name == group
	})
	if len(gs) == 0 {
		return nil
	}
	var out []string
	add := func(name string) {
		if name != "" && !contains(out, name) {
			out = append(out, name)
		}
	}
	for _, g := range gs {
		for _, m := range g.List {
			add(m)
		}
	}
	gid := gs[0].Gid
	us, _ := user.ParsePasswdFilter(h.reader("/etc/passwd"), func(u user.User) bool {
		return host.IsAccount(u.Name) && u.Gid == gid
	})
	for _, u := range us {
		add(u.Name)
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
