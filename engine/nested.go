package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/internal/nsexec"
	"github.com/agentbox/agentbox/policy"
)

// ComposeFile is where, in the bundle, the nested binds that the runtime
// helper lays out (nsexec.Composition) are written; it exists only when
// there are any.
const ComposeFile = "nested-mounts.json"

// splitNested takes the binds whose destination lies below another bind's
// (the workspace's, mostly: its protected paths, its socket covers, a
// --rw-bind inside it) out of the runtime's copy of the spec and returns
// them as a composition; their outermost parent is bound recursively
// instead, so that it brings them along. The runtime mounts as the
// sandbox's root, which cannot search a workspace that only its owner or
// an ACL for the agent lets in; runc create then failed with EACCES on the
// mount point. s itself is not changed.
func splitNested(s *specs.Spec) (*specs.Spec, *nsexec.Composition) {
	keep := make([]specs.Mount, 0, len(s.Mounts))
	byParent := map[int][]nsexec.Nested{}
	var order []int
	for _, m := range s.Mounts {
		pi := outerBind(keep, m)
		if pi < 0 {
			keep = append(keep, m)
			continue
		}
		if _, ok := byParent[pi]; !ok {
			order = append(order, pi)
		}
		byParent[pi] = append(byParent[pi], nested(keep[pi], m))
	}
	if len(order) == 0 {
		return s, nil
	}
	c := &nsexec.Composition{}
	for _, pi := range order {
		keep[pi].Options = recursive(keep[pi].Options)
		c.Parents = append(c.Parents, nsexec.Parent{Source: keep[pi].Source, Mounts: byParent[pi]})
	}
	cp := *s
	cp.Mounts = keep
	return &cp, c
}

// outerBind returns the index in ms of the first bind whose destination
// strictly contains m's, for a bind m; -1 when there is none.
func outerBind(ms []specs.Mount, m specs.Mount) int {
	if m.Type != "bind" {
		return -1
	}
	for i, p := range ms {
		if p.Type == "bind" && strings.HasPrefix(m.Destination, strings.TrimSuffix(p.Destination, "/")+"/") {
			return i
		}
	}
	return -1
}

func nested(parent, m specs.Mount) nsexec.Nested {
	n := nsexec.Nested{
		Source:   m.Source,
		Target:   strings.TrimPrefix(m.Destination, strings.TrimSuffix(parent.Destination, "/")+"/"),
		ReadOnly: slices.Contains(m.Options, "ro"),
	}
	if rel, ok := strings.CutPrefix(m.Source, strings.TrimSuffix(parent.Source, "/")+"/"); ok {
		n.Beneath = rel
	}
	return n
}

// recursive turns a bind's options into a recursive bind's.
func recursive(opts []string) []string {
	out := make([]string, 0, len(opts))
	for _, o := range opts {
		if o == "bind" {
			o = "rbind"
		}
		out = append(out, o)
	}
	return out
}

// writeComposition writes the composition for the runtime helper, or
// removes a stale one when there is none.
func writeComposition(dir string, c *nsexec.Composition) error {
	path := filepath.Join(dir, ComposeFile)
	if c == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.MarshalIndent(c, "", "\t")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o600)
}

// writeCover creates the empty read-only file bound over workspace
// sockets, when a mount uses it.
func writeCover(dir string, ms []specs.Mount) error {
	cover := filepath.Join(dir, policy.CoverFile)
	if !slices.ContainsFunc(ms, func(m specs.Mount) bool { return m.Source == cover }) {
		return nil
	}
	if err := os.WriteFile(cover, nil, 0o444); err != nil {
		return fmt.Errorf("socket cover: %w", err)
	}
	return nil
}

// composition returns the bundle's composition file, "" when it has none.
func composition(bundle string) string {
	path := filepath.Join(bundle, ComposeFile)
	if _, err := os.Lstat(path); err != nil {
		return ""
	}
	return path
}
