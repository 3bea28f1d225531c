package containerd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// readSpec reads the bundle's config.json, the spec the launcher wrote
// (and audited) for the runtime.
func readSpec(bundle string) (*specs.Spec, error) {
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("read the bundle's spec: %w", err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(bundle, "config.json"), err)
	}
	return &s, nil
}

// shimSpec adapts a bundle's spec to containerd: the shim runs the runtime
// in a bundle directory of its own, so a root path or a bind source
// relative to the launcher's bundle is made absolute. Nothing else
// changes; s is not modified.
func shimSpec(s *specs.Spec, bundle string) (*specs.Spec, error) {
	if s.Root == nil || s.Root.Path == "" {
		return nil, fmt.Errorf("%s/config.json: the spec has no root path; the containerd engine runs an unmanaged root and needs one", bundle)
	}
	if !filepath.IsAbs(bundle) {
		return nil, fmt.Errorf("bundle %q: not an absolute path", bundle)
	}
	out := *s
	root := *s.Root
	root.Path = absolute(bundle, root.Path)
	out.Root = &root
	out.Mounts = make([]specs.Mount, len(s.Mounts))
	for i, m := range s.Mounts {
		if m.Source != "" && isBind(m) {
			m.Source = absolute(bundle, m.Source)
		}
		out.Mounts[i] = m
	}
	return &out, nil
}

func absolute(bundle, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(bundle, p)
}

// isBind reports whether m binds a path (whose source is then a file
// name, not a device or file system name like "proc" or "tmpfs").
func isBind(m specs.Mount) bool {
	if m.Type == "bind" || m.Type == "rbind" {
		return true
	}
	for _, o := range m.Options {
		if o == "bind" || o == "rbind" {
			return true
		}
	}
	return false
}
