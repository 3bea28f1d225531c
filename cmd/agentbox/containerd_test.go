//go:build agentbox_containerd

package main

import (
	"testing"

	"github.com/agentbox/agentbox/launcher"
)

// agentbox-containerd links the containerd engine: a run on containerd is
// its own, not handed on again.
func TestContainerdHelperLinksTheEngine(t *testing.T) {
	if _, err := launcher.OpenEngine(launcher.EngineContainerd, ""); err != nil {
		t.Errorf("agentbox-containerd does not link the containerd engine: %v", err)
	}
}
