//go:build agentbox_ext

package main

import (
	"github.com/agentbox/agentbox/engine/containerd"
	"github.com/agentbox/agentbox/launcher"
)

// agentbox-ext, this package built with agentbox_ext, also links the
// commands of launcher.HelperCommands (audit.go, compose.go, kube.go) and
// the containerd engine.
func init() {
	launcher.ProvideEngine(launcher.EngineContainerd, launcher.EngineProvider{Open: containerd.Opener, Recorded: containerd.Recorded})
}
