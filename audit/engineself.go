package audit

import (
	"context"
	"encoding/json"
	"os"
	"strings"
)

// What an engine says of itself (rootless or not, its id mappings, a
// daemon-wide userns-remap), read once per Engine, and what it decides: a
// container's user namespace, whose host user its root is, whose
// privileges the engine's own socket grants.

// userNS refines a container's user-namespace answer with what the engine
// says of itself: every container of a rootless engine is in the user
// namespace the engine runs in, whatever its own mode says (rootless
// Podman's --userns=host is the user's namespace, not the host's); for a
// rootful one, an unset mode is the daemon's default (userns-remap).
func (e *Engine) userNS(ctx context.Context, t Tri) Tri {
	self := e.selfFacts(ctx)
	switch {
	case self.rootless == Yes:
		return Yes
	case t != Unknown:
		return t
	case self.err != nil:
		return Unknown
	case self.remap:
		return Yes
	}
	return No
}

// engineSelf is what an engine says of itself.
type engineSelf struct {
	// rootless: the engine runs as an ordinary user.
	rootless Tri
	// rootUID is the host uid that container uid 0 maps to in the
	// engine's own user namespace (Podman's idMappings), or -1.
	rootUID int
	// remap: dockerd remaps container users daemon-wide (userns-remap).
	remap bool
	err   error
}

// selfFacts asks the engine once what it is. Podman says whether it is
// rootless in its own API (libpod info: host.security.rootless), not in the
// Docker-compatible /info, whose SecurityOptions carry name=rootless for
// rootless Docker only; an engine without the libpod API is read through
// /info.
func (e *Engine) selfFacts(ctx context.Context) engineSelf {
	e.selfOnce.Do(func() {
		e.self = engineSelf{rootless: Unknown, rootUID: -1}
		if e.Kind == "podman" && e.podmanSelf(ctx) {
			return
		}
		b, err := e.get(ctx, "/info")
		var info struct{ SecurityOptions []string }
		if err == nil {
			err = json.Unmarshal(b, &info)
		}
		if err != nil {
			e.self.err = err
			return
		}
		e.self.rootless = No
		for _, o := range info.SecurityOptions {
			e.self.remap = e.self.remap || strings.Contains(o, "name=userns")
			if strings.Contains(o, "name=rootless") {
				e.self.rootless = Yes
			}
		}
	})
	return e.self
}

// podmanAPI is the version prefix of libpod's own endpoints; Podman 4 and
// later serve them under it.
const podmanAPI = "/v4.0.0"

// podmanInfoPath is libpod's info endpoint.
const podmanInfoPath = podmanAPI + "/libpod/info"

// podmanSelf reads libpod info into e.self and reports whether it could.
func (e *Engine) podmanSelf(ctx context.Context) bool {
	b, err := e.get(ctx, podmanInfoPath)
	if err != nil {
		return false
	}
	var info struct {
		Host *struct {
			Security *struct {
				Rootless *bool `json:"rootless"`
			} `json:"security"`
			IDMappings struct {
				UIDMap []struct {
					ContainerID int `json:"container_id"`
					HostID      int `json:"host_id"`
					Size        int `json:"size"`
				} `json:"uidmap"`
			} `json:"idMappings"`
		} `json:"host"`
	}
	if json.Unmarshal(b, &info) != nil || info.Host == nil || info.Host.Security == nil || info.Host.Security.Rootless == nil {
		return false
	}
	e.self.rootless = No
	if *info.Host.Security.Rootless {
		e.self.rootless = Yes
	}
	for _, m := range info.Host.IDMappings.UIDMap {
		if m.ContainerID == 0 && m.Size > 0 {
			e.self.rootUID = m.HostID
		}
	}
	return true
}

// rootUser names the host user that root in the container described by
// raw is: the rootless engine's own user, unless the container's --userns
// maps it elsewhere (keep-id, auto, nomap, a namespace of its own).
func (e *Engine) rootUser(ctx context.Context, raw []byte) string {
	var d struct{ HostConfig *struct{ UsernsMode string } }
	if json.Unmarshal(raw, &d) != nil || d.HostConfig == nil {
		return ""
	}
	if m := d.HostConfig.UsernsMode; m != "" && m != "host" {
		return ""
	}
	self := e.selfFacts(ctx)
	if self.rootless != Yes || self.rootUID <= 0 {
		return ""
	}
	return userName(self.rootUID)
}

// ownSocketGrants completes the grant of every bound socket that is this
// engine's own socket with what the engine says of itself.
func (e *Engine) ownSocketGrants(ctx context.Context, c *Container) {
	own, err := os.Stat(e.Socket)
	if err != nil {
		return
	}
	for i := range c.Mounts {
		m := &c.Mounts[i]
		if m.Grant == nil {
			continue
		}
		if fi, err := os.Stat(m.HostPath); err == nil && os.SameFile(fi, own) {
			m.Grant.fromEngine(e.Kind, e.selfFacts(ctx).rootless)
		}
	}
}
