package manifest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	. "github.com/agentbox/agentbox/audit"
)

// composeKeys are the service keys whose lines findings point at.
var composeKeys = []string{
	"privileged", "cap_add", "cap_drop", "network_mode", "networks", "user",
	"security_opt", "read_only", "pid", "ipc", "uts", "userns_mode", "devices",
	"device_cgroup_rules", "sysctls", "mem_limit", "pids_limit", "command",
	"entrypoint", "use_api_socket", "deploy",
}

// fromService normalises one compose service.
func fromService(p *types.Project, s types.ServiceConfig, loc *locator) Container {
	c := Container{
		Name: s.Name, Source: "compose", Image: s.Image, User: s.User,
		Privileged: s.Privileged, ReadOnlyRoot: s.ReadOnly, APISocket: s.UseAPISocket,
		PidMode: s.Pid, IpcMode: s.Ipc, UTSMode: s.Uts, Sysctls: map[string]string(s.Sysctls),
		DeviceRules: s.DeviceCgroupRules, ProcMounted: true,
		Entrypoint: s.Entrypoint, Command: s.Command,
		ProjectDir: p.WorkingDir, WorkingDir: s.WorkingDir,
	}
	c.Profiles = slices.Sorted(slices.Values(s.Profiles))
	sl := loc.serviceLocation(s.Name)
	c.File, c.Line = sl.File, sl.Line
	c.KeyLines = map[string]Location{}
	for _, k := range composeKeys {
		if l, ok := loc.key(s.Name, k); ok {
			c.KeyLines[k] = l
		}
	}
	if _, ok := c.KeyLines["mem_limit"]; !ok {
		if d, ok := c.KeyLines["deploy"]; ok {
			c.KeyLines["mem_limit"] = d
		}
	}
	if _, ok := c.KeyLines["command"]; !ok {
		if l, ok := c.KeyLines["entrypoint"]; ok {
			c.KeyLines["command"] = l
		}
	}
	c.Mounts = composeMounts(p, s, loc)
	c.Env = composeEnv(s, loc)
	composeCaps(s, &c)
	InspectSecurity(resolveSeccompPaths(s.SecurityOpt, p.WorkingDir), &c)
	c.UserNS = UsernsMode(s.UserNSMode)
	c.FromLabels(s.Labels)
	composeLimits(s, &c)
	composeDevices(s, &c)
	composeNetworks(p, s, &c, 0)
	return c
}

func composeCaps(s types.ServiceConfig, c *Container) {
	for _, x := range s.CapAdd {
		c.CapAdd = append(c.CapAdd, NormalizeCap(x))
	}
	for _, x := range s.CapDrop {
		c.CapDrop = append(c.CapDrop, NormalizeCap(x))
	}
	c.Caps, c.CapsKnown = EffectiveCaps(DefaultCaps, c.CapAdd, c.CapDrop, c.Privileged), true
}

// resolveSeccompPaths makes a relative seccomp=FILE relative to the project
// directory, as docker compose reads it.
func resolveSeccompPaths(opts []string, wd string) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		k, v := SplitSecurityOpt(o)
		if k == "seccomp" && v != "unconfined" && !strings.HasPrefix(strings.TrimSpace(v), "{") && !filepath.IsAbs(v) {
			o = "seccomp=" + filepath.Join(wd, v)
		}
		out[i] = o
	}
	return out
}

func composeLimits(s types.ServiceConfig, c *Container) {
	c.MemoryLimit, c.PidsLimit, c.CPULimit = int64(s.MemLimit), s.PidsLimit, float64(s.CPUS)
	if s.Deploy == nil || s.Deploy.Resources.Limits == nil {
		return
	}
	l := s.Deploy.Resources.Limits
	if c.MemoryLimit <= 0 {
		c.MemoryLimit = int64(l.MemoryBytes)
	}
	if c.PidsLimit <= 0 {
		c.PidsLimit = l.Pids
	}
	if c.CPULimit <= 0 {
		c.CPULimit = float64(l.NanoCPUs)
	}
}

func composeDevices(s types.ServiceConfig, c *Container) {
	for _, d := range s.Devices {
		c.Devices = append(c.Devices, Device{Host: d.Source, Container: d.Target, Permissions: d.Permissions})
	}
	reqs := append([]types.DeviceRequest(nil), s.Gpus...)
	if s.Deploy != nil && s.Deploy.Resources.Reservations != nil {
		reqs = append(reqs, s.Deploy.Resources.Reservations.Devices...)
	}
	for _, r := range reqs {
		c.Devices = append(c.Devices, Device{Host: "device request " + orDefault(r.Driver, strings.Join(r.Capabilities, ","))})
	}
}

// composeMounts reads volumes, tmpfs and volumes_from. A named volume whose
// local driver binds a host directory (driver_opts o: bind, device: PATH)
// is the bind it is.
func composeMounts(p *types.Project, s types.ServiceConfig, loc *locator) []Mount {
	var out []Mount
	for _, v := range s.Volumes {
		m := Mount{Type: v.Type, Source: v.Source, Destination: v.Target, ReadOnly: v.ReadOnly}
		if v.Type == types.VolumeTypeVolume {
			if dev := bindDevice(p, v.Source); dev != "" {
				m.Type, m.Source = "bind", dev
			}
		}
		m.Location = mountLocation(loc, s.Name, v.Target)
		out = append(out, m)
	}
	for _, t := range s.Tmpfs {
		dst, _, _ := strings.Cut(t, ":")
		out = append(out, Mount{Type: "tmpfs", Destination: dst})
	}
	for _, from := range s.VolumesFrom {
		name, mode, _ := strings.Cut(from, ":")
		peer, ok := p.Services[name]
		if !ok || name == s.Name {
			continue
		}
		l, _ := loc.key(s.Name, "volumes_from")
		for _, m := range composeMounts(p, types.ServiceConfig{Name: peer.Name, ContainerSpec: types.ContainerSpec{Volumes: peer.Volumes}}, loc) {
			m.ReadOnly = m.ReadOnly || mode == "ro"
			m.Location = OrLocation(l, m.Location)
			out = append(out, m)
		}
	}
	return out
}

func bindDevice(p *types.Project, name string) string {
	v, ok := p.Volumes[name]
	if !ok || bool(v.External) {
		return ""
	}
	if strings.Contains(v.DriverOpts["o"], "bind") && strings.HasPrefix(v.DriverOpts["device"], "/") {
		return v.DriverOpts["device"]
	}
	return ""
}

// mountLocation finds the volumes entry whose target is dst.
func mountLocation(loc *locator, svc, dst string) Location {
	l, ok := loc.item(svc, "volumes", func(_, v *yaml.Node) bool {
		if v.Kind == yaml.MappingNode {
			return scalar(lookupValue(v, "target")) == dst
		}
		parts := strings.Split(v.Value, ":")
		if len(parts) == 1 {
			return parts[0] == dst
		}
		return parts[1] == dst
	})
	if !ok {
		l, _ = loc.key(svc, "volumes")
	}
	return l
}

// composeEnv reads the resolved environment (environment: and env_file:).
// A variable is passed through from whoever runs compose when its value
// comes from their environment, as it is written (passedThrough), whatever
// the auditing environment holds: an entry without a value, or one that
// interpolates a variable.
func composeEnv(s types.ServiceConfig, loc *locator) []EnvVar {
	var out []EnvVar
	for _, name := range sortedKeys(s.Environment) {
		v := s.Environment[name]
		e := EnvVar{Name: name, FromHost: v == nil}
		if v != nil {
			e.Value = *v
		}
		var fromHost bool
		e.Location, fromHost = envSource(loc, s, name)
		e.FromHost = e.FromHost || fromHost
		out = append(out, e)
	}
	return append(out, bareEnvFileNames(s)...)
}

// bareEnvFileNames are the env_file lines `NAME` that compose dropped because
// the auditing environment lacks NAME: whoever runs compose with NAME set
// passes it in.
func bareEnvFileNames(s types.ServiceConfig) []EnvVar {
	var out []EnvVar
	seen := map[string]bool{}
	for i := len(s.EnvFiles) - 1; i >= 0; i-- {
		b, err := os.ReadFile(s.EnvFiles[i].Path)
		if err != nil {
			continue
		}
		for n, line := range strings.Split(string(b), "\n") {
			name := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
			if name == "" || strings.HasPrefix(name, "#") || strings.ContainsAny(name, "= \t") || seen[name] {
				continue
			}
			seen[name] = true
			if _, ok := s.Environment[name]; !ok {
				out = append(out, EnvVar{Name: name, FromHost: true, Location: Location{File: s.EnvFiles[i].Path, Line: n + 1}})
			}
		}
	}
	return out
}

// envSource returns where name is written for s, and whether the value
// written there is passed through from the invoker's environment. The
// environment: entry wins over env_file lines, the last env_file over the
// earlier ones, as in compose.
func envSource(loc *locator, s types.ServiceConfig, name string) (Location, bool) {
	var raw envEntry
	l, ok := loc.item(s.Name, "environment", func(k, v *yaml.Node) bool {
		if k != nil {
			if k.Value != name {
				return false
			}
			raw = envEntry{value: v.Value, bare: v.Tag == "!!null"}
			return true
		}
		n, val, eq := strings.Cut(v.Value, "=")
		if strings.TrimSpace(n) != name {
			return false
		}
		raw = envEntry{value: val, bare: !eq}
		return true
	})
	if ok {
		return l, raw.passedThrough()
	}
	for i := len(s.EnvFiles) - 1; i >= 0; i-- {
		if n, raw := readEnvFileLine(s.EnvFiles[i].Path, name); n > 0 {
			return Location{File: s.EnvFiles[i].Path, Line: n}, raw.passedThrough()
		}
	}
	if l, ok := loc.key(s.Name, "env_file"); ok {
		return l, false
	}
	return loc.serviceLocation(s.Name), false
}

// envEntry is one variable as written in the compose file or an env file.
type envEntry struct {
	// value is what follows "=" or ":", uninterpolated.
	value string
	// bare is true for an entry without a value (`- NAME`, `NAME:`, an
	// env_file line `NAME`).
	bare bool
}

// passedThrough reports whether the entry's value comes from the
// environment of whoever runs compose: it has none of its own, or it
// interpolates a variable (`${NAME}`, `${NAME:-}`, `$NAME`).
func (e envEntry) passedThrough() bool {
	return e.bare || interpolates(e.value)
}

// interpolates reports whether s refers to a variable the way compose
// interpolates them; "$$" is a literal dollar.
func interpolates(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		switch c := s[i+1]; {
		case c == '$':
			i++
		case c == '{', c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

// composeNetworks reads network_mode and networks; service:X takes X's.
func composeNetworks(p *types.Project, s types.ServiceConfig, c *Container, depth int) {
	mode := s.NetworkMode
	if peer, ok := strings.CutPrefix(mode, "service:"); ok && depth < 8 {
		if ps, ok := p.Services[peer]; ok {
			composeNetworks(p, ps, c, depth+1)
			if c.NetworkMode != "host" && c.NetworkMode != "none" {
				c.NetworkMode = mode
			}
			return
		}
	}
	c.NetworkMode = mode
	for _, name := range sortedKeys(s.Networks) {
		n := Network{Name: name, Internal: No}
		if cfg, ok := p.Networks[name]; ok {
			switch {
			case bool(cfg.External):
				n.Internal, n.External, n.Why = Unknown, true, "external network: its internal flag is set where it was created; audit a running container to read it"
			case cfg.Internal:
				n.Internal = Yes
			}
		}
		c.Networks = append(c.Networks, n)
	}
}
