package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// inspectSecurity reads docker/podman/compose security options
// (seccomp=…, apparmor=…, label=…, no-new-privileges, systempaths=…; the old
// KEY:VALUE spelling too).
func inspectSecurity(opts []string, c *Container) {
	c.NoNewPrivileges = No
	c.Seccomp = Seccomp{Mode: "default"}
	for _, o := range opts {
		k, v := splitSecurityOpt(o)
		switch k {
		case "no-new-privileges":
			if v == "" || truthy(v) {
				c.NoNewPrivileges = Yes
			}
		case "seccomp":
			c.Seccomp = seccompOpt(v)
		case "apparmor":
			c.AppArmor = v
		case "label":
			c.SELinux = append(c.SELinux, v)
		case "systempaths":
			c.SystemPaths = v
		}
	}
}

func splitSecurityOpt(o string) (string, string) {
	i := strings.IndexAny(o, "=:")
	if i < 0 {
		return o, ""
	}
	return o[:i], o[i+1:]
}

// seccompOpt reads the value of seccomp=: unconfined, inline JSON (what the
// docker CLI sends and inspect shows) or a profile path (podman, compose).
func seccompOpt(v string) Seccomp {
	switch {
	case v == "unconfined":
		return Seccomp{Mode: "unconfined"}
	case strings.HasPrefix(strings.TrimSpace(v), "{"):
		s := Seccomp{Mode: "custom", Profile: "inline profile"}
		p, err := parseSeccomp([]byte(v))
		if err != nil {
			s.Error = err.Error()
			return s
		}
		s.Weak, s.WeakKnown = seccompWeak(p)
		return s
	}
	s := Seccomp{Mode: "custom", Profile: v}
	p, err := loadSeccompFile(v)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Weak, s.WeakKnown = seccompWeak(p)
	return s
}

// parseSeccomp reads a Docker-format or OCI seccomp profile.
func parseSeccomp(b []byte) (*specs.LinuxSeccomp, error) {
	var p specs.LinuxSeccomp
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("parse seccomp profile: %w", err)
	}
	if p.DefaultAction == "" {
		return nil, fmt.Errorf("parse seccomp profile: defaultAction is missing")
	}
	return &p, nil
}

func loadSeccompFile(path string) (*specs.LinuxSeccomp, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read seccomp profile: %w", err)
	}
	return parseSeccomp(b)
}

func sortNetworks(ns []Network) {
	sort.Slice(ns, func(i, j int) bool { return ns[i].Name < ns[j].Name })
}
