package manifest

import (
	"context"

	. "github.com/agentbox/agentbox/audit"
)

// Loaders is lo with its compose and Kubernetes loaders set (LoadCompose
// with co, LoadKube with ko): what audit.Load and audit.LoadAndAudit need
// to read those kinds of target.
func Loaders(lo LoadOptions, co ComposeOptions, ko KubeOptions) LoadOptions {
	lo.Compose = func(ctx context.Context, files []string) ([]Container, error) { return LoadCompose(ctx, files, co) }
	lo.Kube = func(paths []string) ([]Container, error) { return LoadKube(paths, ko) }
	return lo
}
