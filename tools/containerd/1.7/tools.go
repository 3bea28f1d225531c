//go:build tools

// Package tools pins the commands this module builds (containerd's daemon
// and its runc v2 shim, at the version go.mod requires) so that go mod tidy
// keeps their dependencies.
package tools

import (
	_ "github.com/containerd/containerd/cmd/containerd"
	_ "github.com/containerd/containerd/cmd/containerd-shim-runc-v2"
)
