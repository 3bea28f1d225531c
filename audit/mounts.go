package audit

import (
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/policy"
)

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
	if dst := cleanPath(m.Destination); policy.IsEngineSocket(dst) && m.Type != "tmpfs" {
		return f(CodeContainerSocket, socketDestinationDetail(m))
	}
	if !isHostMount(m) {
		if writable(m) && m.Type == "volume" {
			return f(CodeExtraWritable, "a named or anonymous volume is writable and outlives the container")
		}
		return Finding{}, false
	}
	p := m.hostPath()
	if c := policy.ClassifyBind(p, o.bindFacts(m)); c.Code != "" {
		detail := c.Describe(p)
		if c.Code == CodeContainerSocket {
			detail = socketDetail(p, c, m.Grant)
		}
		fd, _ := f(c.Code, detail)
		if c.Code == CodeSystemDirectory && m.ReadOnly {
			fd.Severity = Medium
		}
		return fd, true
	}
	if writable(m) && !isWorkspace(p, o) {
		return f(CodeExtraWritable, "a host directory is writable and it is not the declared workspace")
	}
	return Finding{}, false
}

// bindFacts is what o and m say about m's host path, for the one path
// classifier.
func (o *Options) bindFacts(m Mount) policy.BindFacts {
	return policy.BindFacts{
		ReadOnly: m.ReadOnly, Homes: o.HomeDirs, Workspaces: o.Workspaces,
		ReadOnlyPaths: o.ReadOnlyPaths, RuntimeFiles: o.RuntimeFiles, SameFileAs: m.SameFile,
	}
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
