//go:build agentbox_containerd

package main

import (
	"github.com/agentbox/agentbox/engine/containerd"
	"github.com/agentbox/agentbox/launcher"
)

// agentbox-containerd, this package built with agentbox_containerd, also
// links the containerd engine; agentbox-ext (agentbox_ext) links the
// commands of launcher.HelperCommands (audit.go, compose.go, kube.go).
func init() {
	launcher.ProvideEngine(launcher.EngineContainerd, launcher.EngineProvider{Open: containerd.Opener, Recorded: containerd.Recorded})
}
