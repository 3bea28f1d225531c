package audit

import (
	"sort"
	"strings"
)

// InspectSecurity reads docker/podman/compose security options
// (seccomp=…, apparmor=…, label=…, no-new-privileges, systempaths=…; the old
// KEY:VALUE spelling too).
func InspectSecurity(opts []string, c *Container) {
	c.NoNewPrivileges = No
	c.Seccomp = Seccomp{Mode: "default"}
	for _, o := range opts {
		k, v := SplitSecurityOpt(o)
		switch k {
		case "no-new-privileges":
			if v == "" || truthy(v) {
				c.NoNewPrivileges = Yes
			}
		case "seccomp":
			c.Seccomp = seccompOpt(v, c.Caps)
		case "apparmor":
			c.AppArmor = v
		case "label":
			c.SELinux = append(c.SELinux, v)
		case "systempaths":
			c.SystemPaths = v
		}
	}
}

func SplitSecurityOpt(o string) (string, string) {
	i := strings.IndexAny(o, "=:")
	if i < 0 {
		return o, ""
	}
	return o[:i], o[i+1:]
}

// seccompOpt reads the value of seccomp=: unconfined, inline JSON (what the
// docker CLI sends and inspect shows) or a profile path (podman, compose).
func seccompOpt(v string, caps []string) Seccomp {
	switch {
	case v == "unconfined":
		return Seccomp{Mode: "unconfined"}
	case strings.HasPrefix(strings.TrimSpace(v), "{"):
		s := Seccomp{Mode: "custom", Profile: "inline profile"}
		p, err := parseSeccomp([]byte(v), caps)
		if err != nil {
			s.Error = err.Error()
			return s
		}
		s.Weak, s.WeakKnown = SeccompWeak(p)
		return s
	}
	s := Seccomp{Mode: "custom", Profile: v}
	p, err := LoadSeccompFile(v, caps)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Weak, s.WeakKnown = SeccompWeak(p)
	return s
}

func sortNetworks(ns []Network) {
	sort.Slice(ns, func(i, j int) bool { return ns[i].Name < ns[j].Name })
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
