//go:build tools

// Package tools pins the command this module builds (gVisor's runsc, from
// its Go-buildable branch at the pseudo-version go.mod names) so that go mod
// tidy keeps its dependencies.
package tools

import (
	_ "gvisor.dev/gvisor/runsc"
)
