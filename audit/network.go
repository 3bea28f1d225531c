package audit

import (
	"fmt"
	"strings"
)

func checkHostNetwork(c *Container, o *Options) []Finding {
	if c.NetworkMode != "host" {
		return nil
	}
	f := newFinding(CodeHostNetwork, "network_mode: host",
		"the container uses the host's network stack: every host interface, loopback service and route",
		c.keyLocation("network_mode"))
	f.Evidence = "network mode host"
	return []Finding{f}
}

// checkNetworkPolicy reports every attached network that is not internal,
// and every one whose internal flag could not be read, as unknown.
func checkNetworkPolicy(c *Container, o *Options) []Finding {
	loc := c.keyLocation("networks")
	mode := c.NetworkMode
	switch {
	case mode == "host":
		return []Finding{hostNetworkPolicy(c)}
	case mode == "none" || mode == "private":
		return nil
	case strings.HasPrefix(mode, "ns:"):
		return nsFinding(c, o, strings.TrimPrefix(mode, "ns:"))
	case strings.HasPrefix(mode, "container:") || strings.HasPrefix(mode, "service:"):
		if len(c.Networks) == 0 {
			f := newFinding(CodeNetworkPolicy, mode,
				"the container joins another one's network namespace, which this source cannot read", c.keyLocation("network_mode"))
			f.Unknown = true
			return []Finding{f}
		}
	}
	if len(c.Networks) == 0 {
		f := newFinding(CodeNetworkPolicy, orDefault(mode, "default"),
			"the container is on the engine's default bridge network, which is never internal", loc)
		f.Evidence = "network mode " + orDefault(mode, "default")
		return []Finding{f}
	}
	var out []Finding
	for _, n := range c.Networks {
		if n.Internal == Yes || vouched(n.Name, o) {
			continue
		}
		f := newFinding(CodeNetworkPolicy, n.Name, networkDetail(n), loc)
		f.Unknown = n.Internal != No
		f.Evidence = fmt.Sprintf("network %s internal=%s", n.Name, n.Internal)
		out = append(out, f)
	}
	return out
}

// hostNetworkPolicy is the network-policy finding of host network mode: no
// network policy can apply to a container that has the host's own stack (the
// lab's fault list puts host mode under "network policy never applied").
func hostNetworkPolicy(c *Container) Finding {
	f := newFinding(CodeNetworkPolicy, "network_mode: host",
		"the container shares the host's network stack, so no network policy applies: it routes wherever the host does",
		c.keyLocation("network_mode"))
	f.Evidence = "network mode host"
	return f
}

func networkDetail(n Network) string {
	d := fmt.Sprintf("network %s is not internal: it routes to the outside", n.Name)
	if n.Internal != No {
		d = fmt.Sprintf("whether network %s is internal cannot be read", n.Name)
	}
	if n.Why != "" {
		d += " (" + n.Why + ")"
	}
	return d
}

func nsFinding(c *Container, o *Options, path string) []Finding {
	if vouched(path, o) {
		return nil
	}
	f := newFinding(CodeNetworkPolicy, path,
		"the container joins an existing network namespace whose routes this audit cannot read", c.keyLocation("network_mode"))
	f.Unknown = true
	f.Evidence = "network namespace " + path
	return []Finding{f}
}

func vouched(name string, o *Options) bool {
	for _, n := range o.InternalNetworks {
		if n == name {
			return true
		}
	}
	return false
}
