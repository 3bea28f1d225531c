package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp"
)

// Spec audits agentbox's own generated spec before launch: the OCI source,
// agent settings files behind its binds, and the same checks as every other
// source. Report.Unaccepted lists what refuses the launch.
func Spec(s *specs.Spec, opts Options) Report {
	c := FromSpec(s, "agentbox")
	c.Resolve()
	c.AgentConfigs = ScanAgentConfigs(c.Mounts)
	return Audit([]Container{c}, opts)
}

// LoadOCI reads an OCI bundle directory (its config.json) or a config.json
// file into the model. Bad input is an *InputError.
func LoadOCI(path string) (Container, error) {
	file := path
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		file = filepath.Join(path, "config.json")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Container{}, &InputError{File: file, Err: fmt.Errorf("read OCI config: %w", err)}
	}
	var s specs.Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return Container{}, &InputError{File: file, Line: jsonErrorLine(b, err), Err: fmt.Errorf("parse OCI config: %w", err)}
	}
	if s.Version == "" {
		return Container{}, &InputError{File: file, Err: errors.New("not an OCI runtime config: ociVersion is missing")}
	}
	name := filepath.Base(filepath.Dir(file))
	c := FromSpec(&s, name)
	c.File = file
	c.Resolve()
	c.AgentConfigs = ScanAgentConfigs(c.Mounts)
	return c, nil
}

// FromSpec normalises an OCI runtime spec into the model. It reads nothing
// but s: a namespace that is absent is the host's, a missing seccomp section
// is unconfined.
func FromSpec(s *specs.Spec, name string) Container {
	c := Container{Name: name, Source: "oci", UserNS: No, NoNewPrivileges: No, Seccomp: Seccomp{Mode: "unconfined"}}
	if s == nil {
		return c
	}
	c.Mounts = ociMounts(s.Mounts, &c)
	ociProcess(s.Process, &c)
	c.ReadOnlyRoot = s.Root != nil && s.Root.Readonly
	if s.Linux != nil {
		ociLinux(s.Linux, &c)
	} else {
		c.NetworkMode, c.PidMode, c.IpcMode, c.UTSMode = "host", "host", "host", "host"
	}
	if raw, ok := s.Annotations[seccomp.CrunBPFAnnotation]; ok {
		ociRawFilter(raw, s.Linux, &c)
	}
	return c
}

// ociRawFilter judges a spec that hands crun a filter compiled ahead
// (seccomp.CrunBPFAnnotation): crun loads that program instead of the
// seccomp section. When it is the section's own compile (agentbox's
// bundles for crun), the section is what runs and stays judged; any other
// program (or one without a section) cannot be judged, whatever the
// section says.
func ociRawFilter(raw string, l *specs.Linux, c *Container) {
	if l != nil && l.Seccomp != nil {
		if own, err := seccomp.CrunBPF(l.Seccomp); err == nil && own == raw {
			return
		}
	}
	c.Seccomp = Seccomp{
		Mode: "custom", Profile: "annotation " + seccomp.CrunBPFAnnotation,
		Error: "crun loads the raw BPF filter of this annotation in place of linux.seccomp, and it is not that section's compile, so the filter that runs is not the one configured",
	}
}

func ociMounts(ms []specs.Mount, c *Container) []Mount {
	out := make([]Mount, 0, len(ms))
	for _, m := range ms {
		typ := m.Type
		for _, o := range m.Options {
			if o == "bind" || o == "rbind" {
				typ = "bind"
			}
		}
		if typ == "proc" {
			c.ProcMounted = true
		}
		out = append(out, Mount{Type: typ, Source: m.Source, Destination: m.Destination, ReadOnly: hasOption(m.Options, "ro")})
	}
	return out
}

func hasOption(opts []string, o string) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}

func ociProcess(p *specs.Process, c *Container) {
	if p == nil {
		c.CapsKnown = false
		return
	}
	c.User = strconv.FormatUint(uint64(p.User.UID), 10) + ":" + strconv.FormatUint(uint64(p.User.GID), 10)
	for _, kv := range p.Env {
		k, v, _ := strings.Cut(kv, "=")
		c.Env = append(c.Env, EnvVar{Name: k, Value: v})
	}
	c.Command = append([]string(nil), p.Args...)
	if p.NoNewPrivileges {
		c.NoNewPrivileges = Yes
	}
	c.AppArmor = p.ApparmorProfile
	if p.SelinuxLabel != "" {
		c.SELinux = []string{p.SelinuxLabel}
	}
	c.CapsKnown = true
	if p.Capabilities != nil {
		k := p.Capabilities
		c.Caps = unionCaps(k.Bounding, k.Effective, k.Permitted, k.Inheritable, k.Ambient)
		c.CapsInherited = unionCaps(k.Inheritable, k.Ambient)
	}
}

func unionCaps(sets ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range sets {
		for _, c := range s {
			c = NormalizeCap(c)
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

func ociLinux(l *specs.Linux, c *Container) {
	ociNamespaces(l, c)
	c.MaskedPaths, c.ReadonlyPaths, c.PathsKnown = l.MaskedPaths, l.ReadonlyPaths, true
	c.Sysctls = l.Sysctl
	for _, d := range l.Devices {
		if !defaultDevices[d.Path] {
			c.Devices = append(c.Devices, Device{Host: d.Path, Container: d.Path, Permissions: d.Type})
		}
	}
	ociResources(l.Resources, c)
	if l.Seccomp != nil {
		c.Seccomp = Seccomp{Mode: "custom", Profile: "linux.seccomp"}
		c.Seccomp.Weak, c.Seccomp.WeakKnown = SeccompWeak(l.Seccomp)
	}
	if hasCap(c.Caps, "CAP_SYS_ADMIN") && len(c.DeviceRules) > 0 && l.Seccomp == nil {
		c.Privileged = true
	}
}

// defaultDevices are created in every container by the runtime.
var defaultDevices = wordSet("/dev/null", "/dev/zero", "/dev/full", "/dev/random",
	"/dev/urandom", "/dev/tty", "/dev/console", "/dev/ptmx")

func hasCap(caps []string, c string) bool {
	for _, x := range caps {
		if x == c {
			return true
		}
	}
	return false
}

func ociNamespaces(l *specs.Linux, c *Container) {
	c.NetworkMode, c.PidMode, c.IpcMode, c.UTSMode = "host", "host", "host", "host"
	for _, ns := range l.Namespaces {
		mode := "private"
		if ns.Path != "" {
			mode = "ns:" + ns.Path
		}
		switch ns.Type {
		case specs.NetworkNamespace:
			c.NetworkMode = mode
		case specs.PIDNamespace:
			c.PidMode = mode
		case specs.IPCNamespace:
			c.IpcMode = mode
		case specs.UTSNamespace:
			c.UTSMode = mode
		case specs.UserNamespace:
			c.UserNS = userNSMapping(ns.Path, l.UIDMappings)
		default:
			// mount, cgroup and time namespaces are not audited
		}
	}
}

// userNSMapping says whether a user namespace keeps container root off host
// root: a mapping of uid 0 to host uid 0 does not.
func userNSMapping(path string, m []specs.LinuxIDMapping) Tri {
	if len(m) == 0 {
		if path != "" {
			return Unknown
		}
		return Yes
	}
	for _, x := range m {
		if x.ContainerID == 0 && x.HostID == 0 && x.Size > 0 {
			return No
		}
	}
	return Yes
}

func ociResources(r *specs.LinuxResources, c *Container) {
	if r == nil {
		return
	}
	if r.Memory != nil && r.Memory.Limit != nil {
		c.MemoryLimit = *r.Memory.Limit
	}
	if r.Pids != nil && r.Pids.Limit != nil {
		c.PidsLimit = *r.Pids.Limit
	}
	if r.CPU != nil && r.CPU.Quota != nil && r.CPU.Period != nil && *r.CPU.Period > 0 {
		c.CPULimit = float64(*r.CPU.Quota) / float64(*r.CPU.Period)
	}
	for _, d := range r.Devices {
		if d.Allow && (d.Type == "" || d.Type == "a") && d.Major == nil && d.Minor == nil {
			c.DeviceRules = append(c.DeviceRules, "a *:* "+d.Access)
		}
	}
}

// InputError is bad input: the file (and line, when known) that could not
// be read as the source it was given as.
type InputError struct {
	File string
	Line int
	Err  error
}

func (e *InputError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	case e.File != "":
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// jsonErrorLine returns the line of a JSON syntax or type error, or 0.
func jsonErrorLine(b []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return 0
	}
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	return 1 + strings.Count(string(b[:off]), "\n")
}
