//go:build agentbox_ext

package main

import (
	"testing"

	"github.com/agentbox/agentbox/launcher"
)

// agentbox-ext registers every command the launch binary lists for it,
// under the same help line.
func TestHelperCommandsAreRegistered(t *testing.T) {
	for name, summary := range launcher.HelperCommands {
		c, ok := commands[name]
		if !ok || c.summary != summary {
			t.Errorf("agentbox lists %s as %q; agentbox-ext registers %v with %q", name, summary, ok, c.summary)
		}
	}
}
