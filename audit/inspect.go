package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// inspectDoc is the part of `docker inspect` / `podman inspect` output (and
// of the Engine API's GET /containers/{id}/json) that the audit reads.
type inspectDoc struct {
	ID              string `json:"Id"`
	Name            string
	Path            string
	Args            []string
	AppArmorProfile string
	ProcessLabel    string
	Config          *struct {
		User       string
		Env        []string
		WorkingDir string
		Labels     map[string]string
		Image      string
		Cmd        stringOrSlice
		Entrypoint stringOrSlice
	}
	HostConfig *inspectHost
	Mounts     []struct {
		Type, Name, Source, Destination string
		RW                              bool
	}
	NetworkSettings *struct {
		Networks map[string]*struct{ NetworkID string }
	}
	// Podman reports the resulting capability set.
	EffectiveCaps []string
	BoundingCaps  []string
}

type inspectHost struct {
	Binds             []string
	NetworkMode       string
	CapAdd, CapDrop   []string
	Privileged        bool
	ReadonlyRootfs    bool
	SecurityOpt       []string
	PidMode           string
	IpcMode           string
	UTSMode           string
	UsernsMode        string
	Devices           []struct{ PathOnHost, PathInContainer, CgroupPermissions string }
	DeviceCgroupRules []string
	Sysctls           map[string]string
	Memory            int64
	PidsLimit         *int64
	NanoCpus          int64
	CPUQuota          int64 `json:"CpuQuota"`
	CPUPeriod         int64 `json:"CpuPeriod"`
	MaskedPaths       *[]string
	ReadonlyPaths     *[]string
	Tmpfs             map[string]string
}

// stringOrSlice accepts a JSON string (podman 3 entrypoints) or an array.
type stringOrSlice []string

func (s *stringOrSlice) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// LoadInspect reads `docker inspect` or `podman inspect` output saved to a
// file: an array of containers or a single object.
func LoadInspect(path string) ([]Container, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{File: path, Err: fmt.Errorf("read inspect output: %w", err)}
	}
	cs, err := ParseInspect(b, "inspect")
	if err != nil {
		return nil, &InputError{File: path, Line: jsonErrorLine(b, err), Err: err}
	}
	for i := range cs {
		cs[i].File = path
		cs[i].Resolve()
		cs[i].AgentConfigs = ScanAgentConfigs(cs[i].Mounts)
	}
	return cs, nil
}

// ParseInspect normalises inspect JSON (an array or one object) into the
// model; source names the source ("inspect", "docker", "podman"). It reads
// nothing but b.
func ParseInspect(b []byte, source string) ([]Container, error) {
	b = bytes.TrimSpace(b)
	var docs []inspectDoc
	switch {
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &docs); err != nil {
			return nil, fmt.Errorf("parse inspect output: %w", err)
		}
	case len(b) > 0 && b[0] == '{':
		var d inspectDoc
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("parse inspect output: %w", err)
		}
		docs = []inspectDoc{d}
	default:
		return nil, errors.New("not docker/podman inspect output: want a JSON array or object")
	}
	out := make([]Container, 0, len(docs))
	for i, d := range docs {
		if d.HostConfig == nil || d.Config == nil {
			return nil, fmt.Errorf("entry %d is not a container (no Config or HostConfig): pass the output of 'docker inspect CONTAINER'", i)
		}
		out = append(out, fromInspect(&d, source))
	}
	return out, nil
}

func fromInspect(d *inspectDoc, source string) Container {
	h := d.HostConfig
	c := Container{
		Name: strings.TrimPrefix(d.Name, "/"), Source: source, Image: d.Config.Image,
		User: d.Config.User, Privileged: h.Privileged, ReadOnlyRoot: h.ReadonlyRootfs,
		PidMode: h.PidMode, IpcMode: h.IpcMode, UTSMode: h.UTSMode, NetworkMode: h.NetworkMode,
		Sysctls: h.Sysctls, DeviceRules: h.DeviceCgroupRules, MemoryLimit: h.Memory,
		ProcMounted: true, AppArmor: d.AppArmorProfile,
		WorkingDir: d.Config.WorkingDir, ProjectDir: d.Config.Labels[composeWorkingDirLabel],
	}
	if c.Name == "" {
		c.Name = shortID(d.ID)
	}
	c.Entrypoint, c.Command = d.Config.Entrypoint, d.Config.Cmd
	if d.Path != "" {
		c.Entrypoint, c.Command = []string{d.Path}, d.Args
	}
	for _, kv := range d.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		c.Env = append(c.Env, EnvVar{Name: k, Value: v})
	}
	c.Mounts = inspectMounts(d)
	inspectLimits(h, &c)
	inspectCaps(d, &c, source)
	InspectSecurity(h.SecurityOpt, &c)
	if d.ProcessLabel != "" {
		c.SELinux = append(c.SELinux, d.ProcessLabel)
	}
	c.UserNS = UsernsMode(h.UsernsMode)
	c.FromLabels(d.Config.Labels)
	inspectNetworks(d, &c)
	return c
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func inspectMounts(d *inspectDoc) []Mount {
	var out []Mount
	for _, m := range d.Mounts {
		src := m.Source
		if m.Type == "volume" && m.Name != "" {
			src = m.Name
		}
		out = append(out, Mount{Type: m.Type, Source: src, Destination: m.Destination, ReadOnly: !m.RW})
	}
	for dst := range d.HostConfig.Tmpfs {
		out = append(out, Mount{Type: "tmpfs", Destination: dst})
	}
	if len(d.Mounts) == 0 {
		for _, b := range d.HostConfig.Binds {
			out = append(out, parseBind(b))
		}
	}
	return out
}

// parseBind reads a -v SRC:DST[:OPTS] bind.
func parseBind(b string) Mount {
	parts := strings.Split(b, ":")
	m := Mount{Type: "bind", Source: parts[0]}
	if len(parts) > 1 {
		m.Destination = parts[1]
	}
	if len(parts) > 2 {
		m.ReadOnly = hasOption(strings.Split(parts[2], ","), "ro")
	}
	if !strings.HasPrefix(m.Source, "/") {
		m.Type = "volume"
	}
	return m
}

func inspectLimits(h *inspectHost, c *Container) {
	if h.PidsLimit != nil {
		c.PidsLimit = *h.PidsLimit
	}
	switch {
	case h.NanoCpus > 0:
		c.CPULimit = float64(h.NanoCpus) / 1e9
	case h.CPUQuota > 0 && h.CPUPeriod > 0:
		c.CPULimit = float64(h.CPUQuota) / float64(h.CPUPeriod)
	}
	for _, d := range h.Devices {
		c.Devices = append(c.Devices, Device{Host: d.PathOnHost, Container: d.PathInContainer, Permissions: d.CgroupPermissions})
	}
	if h.MaskedPaths != nil && h.ReadonlyPaths != nil {
		c.MaskedPaths, c.ReadonlyPaths, c.PathsKnown = *h.MaskedPaths, *h.ReadonlyPaths, true
	}
}

func inspectCaps(d *inspectDoc, c *Container, source string) {
	for _, x := range d.HostConfig.CapAdd {
		c.CapAdd = append(c.CapAdd, NormalizeCap(x))
	}
	for _, x := range d.HostConfig.CapDrop {
		c.CapDrop = append(c.CapDrop, NormalizeCap(x))
	}
	c.CapsKnown = true
	// Only Podman reports the resulting sets, whether its inspect output
	// is read from the engine or from a file.
	if source == "podman" || d.EffectiveCaps != nil || d.BoundingCaps != nil {
		c.EngineCaps = PodmanDefaultCaps
	}
	if d.EffectiveCaps != nil || d.BoundingCaps != nil {
		c.Caps = unionCaps(d.EffectiveCaps, d.BoundingCaps)
		return
	}
	c.Caps = EffectiveCaps(c.engineCaps(), c.CapAdd, c.CapDrop, c.Privileged)
}

// engineCaps is the default capability set of the container's engine.
func (c *Container) engineCaps() []string {
	if c.EngineCaps == nil {
		return DefaultCaps
	}
	return c.EngineCaps
}

// PodmanDefaultCaps is the capability set podman (4 and later) gives a
// container.
var PodmanDefaultCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP",
	"CAP_SETUID", "CAP_SYS_CHROOT",
}

// AllCaps is every capability Linux defines (up to 6.x).
var AllCaps = []string{
	"CAP_AUDIT_CONTROL", "CAP_AUDIT_READ", "CAP_AUDIT_WRITE", "CAP_BLOCK_SUSPEND",
	"CAP_BPF", "CAP_CHECKPOINT_RESTORE", "CAP_CHOWN", "CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_KILL", "CAP_LEASE", "CAP_LINUX_IMMUTABLE",
	"CAP_MAC_ADMIN", "CAP_MAC_OVERRIDE", "CAP_MKNOD", "CAP_NET_ADMIN",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_RAW", "CAP_PERFMON",
	"CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID", "CAP_SYSLOG",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_CHROOT", "CAP_SYS_MODULE",
	"CAP_SYS_NICE", "CAP_SYS_PACCT", "CAP_SYS_PTRACE", "CAP_SYS_RAWIO",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_WAKE_ALARM",
}

// EffectiveCaps applies cap_drop then cap_add to an engine's default set, as
// docker and podman do ("ALL" in either list means every capability).
func EffectiveCaps(defaults, add, drop []string, privileged bool) []string {
	if privileged {
		return append([]string(nil), AllCaps...)
	}
	set := map[string]bool{}
	if !hasCap(drop, "ALL") {
		for _, c := range defaults {
			set[c] = !hasCap(drop, c)
		}
	}
	for _, c := range add {
		if c == "ALL" {
			for _, a := range AllCaps {
				set[a] = true
			}
			continue
		}
		set[c] = true
	}
	var out []string
	for _, c := range AllCaps {
		if set[c] {
			out = append(out, c)
			delete(set, c)
		}
	}
	for c, on := range set {
		if on {
			out = append(out, c)
		}
	}
	return out
}

// UsernsMode reads HostConfig.UsernsMode. "" depends on the daemon
// (userns-remap, rootless), which inspect output does not say.
func UsernsMode(m string) Tri {
	switch m {
	case "host":
		return No
	case "":
		return Unknown
	}
	return Yes // podman: auto, keep-id, nomap, ns:…, private
}

func inspectNetworks(d *inspectDoc, c *Container) {
	mode := c.NetworkMode
	if mode == "host" || mode == "none" || strings.HasPrefix(mode, "container:") {
		return
	}
	if d.NetworkSettings == nil {
		return
	}
	for name := range d.NetworkSettings.Networks {
		n := Network{Name: name, Internal: Unknown, Why: "inspect output does not carry the network's internal flag; audit the running container to read it"}
		if name == "bridge" || name == "podman" {
			n.Internal, n.Why = No, "the engine's default network is never internal"
		}
		c.Networks = append(c.Networks, n)
	}
	sortNetworks(c.Networks)
}
