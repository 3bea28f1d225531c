package workspace

import (
	"sort"
	"strings"
)

// Leftover is one thing the agent created or changed that a host tool
// executes on its own.
type Leftover struct {
	// Path is relative to the workspace.
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Change is "created" (absent at launch) or "changed".
	Change string `json:"change"`
	// Key and Value are the executable git key the agent added or changed
	// (KindGitConfig).
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
	// Detail says what runs it, or where a symlink or gitdir file points.
	Detail string `json:"detail,omitempty"`
}

// maxDetail bounds an agent-written value copied into a Leftover.
const maxDetail = 256

// Changes compares the launch snapshot with the teardown one and returns
// what the agent left for host tools, sorted by path. An item gone by
// teardown is not listed: nothing runs it any more.
func Changes(before, after *Snapshot) []Leftover {
	var out []Leftover
	for _, m := range []func(*Snapshot) map[string]Item{
		func(s *Snapshot) map[string]Item { return s.Items },
		func(s *Snapshot) map[string]Item { return s.Protected },
	} {
		was, now := m(before), m(after)
		for _, p := range sortedPaths(now) {
			w, existed := was[p]
			out = append(out, itemChanges(p, w, existed, now[p])...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func itemChanges(p string, was Item, existed bool, now Item) []Leftover {
	change := "changed"
	if !existed || was.State == "absent" || strings.HasPrefix(was.State, "through-") {
		change = "created"
	}
	switch {
	case now.Kind == KindProtected:
		if change == "created" && present(now.State) {
			return []Leftover{{Path: p, Kind: now.Kind, Change: change, Detail: "did not exist at launch, so it was not read-only in the sandbox"}}
		}
		return nil
	case existed && was.State == now.State:
		return nil
	case now.Kind == KindGitConfig && !strings.HasPrefix(now.State, "symlink:"):
		return newKeys(p, change, was.Keys, now.Keys)
	}
	return []Leftover{{Path: p, Kind: now.Kind, Change: change, Detail: detail(now)}}
}

// newKeys lists the executable keys of now that was did not have with the
// same value.
func newKeys(p, change string, was, now []Key) []Leftover {
	old := map[Key]bool{}
	for _, k := range was {
		old[k] = true
	}
	var out []Leftover
	for _, k := range now {
		if !old[k] {
			out = append(out, Leftover{Path: p, Kind: KindGitConfig, Change: change, Key: k.Name, Value: clip(k.Value), Detail: "git runs or reads it on the user's next git command"})
		}
	}
	return out
}

func detail(it Item) string {
	if t, ok := strings.CutPrefix(it.State, "symlink:"); ok {
		return "a symlink to " + clip(t) + "; host tools follow it"
	}
	switch it.Kind {
	case KindGitConfig:
		return "git reads it on the user's next git command"
	case KindHook:
		return "git runs it as the user"
	case KindGitFile:
		return "git takes the repository's config and hooks from the gitdir it names"
	case KindEnvrc:
		return "direnv runs it when the user enters the directory (once allowed)"
	case KindVSCodeTasks:
		return "VS Code runs its folderOpen tasks when the folder is opened"
	case KindDevcontainer:
		return "dev container tools run its lifecycle commands on the host and in the container"
	case KindProtected:
	}
	return ""
}

func present(state string) bool {
	return state != "absent" && !strings.HasPrefix(state, "through-")
}

func clip(s string) string {
	if len(s) <= maxDetail {
		return s
	}
	return s[:maxDetail] + "…"
}

func sortedPaths(m map[string]Item) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
