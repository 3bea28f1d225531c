package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Limits bound one walk of the workspace.
type Limits struct {
	// MaxEntries is the number of directory entries one walk visits.
	MaxEntries int
	// MaxDepth is the number of directory levels below the workspace.
	MaxDepth int
	// MaxFileBytes is what is read of one file (a git config, a hook).
	MaxFileBytes int64
	// MaxSockets is the number of sockets one walk names; the plan covers
	// each, one mount apiece.
	MaxSockets int
}

// DefaultLimits are the bounds of Inspect.
var DefaultLimits = Limits{MaxEntries: 200000, MaxDepth: 64, MaxFileBytes: 1 << 20, MaxSockets: 256}

// Kind says which host tool executes an item on its own.
type Kind string

// The kinds of item.
const (
	KindGitConfig    Kind = "git-config"   // a repository's config, config.worktree
	KindHook         Kind = "git-hook"     // a file in a repository's hooks/ (not *.sample)
	KindGitFile      Kind = "gitdir-file"  // a .git file: "gitdir: PATH", where git reads config and hooks
	KindEnvrc        Kind = "envrc"        // direnv runs it on cd
	KindVSCodeTasks  Kind = "vscode-tasks" // .vscode/tasks.json (folderOpen tasks run on open)
	KindDevcontainer Kind = "devcontainer" // .devcontainer/*, .devcontainer.json (lifecycle commands)
	KindProtected    Kind = "protected"    // a protected path (state only)
)

// Item is one thing a host tool would execute, as it was when inspected.
type Item struct {
	Kind Kind `json:"kind"`
	// State is "sha256:…" for a regular file's content (with "+truncated"
	// past Limits.MaxFileBytes), "symlink:TARGET", or the file type
	// ("directory", "fifo", …); for a protected path also "absent",
	// "through-symlink" or "through-file" (a component above it is one).
	State string `json:"state"`
	// Keys are a git config's executable keys (KindGitConfig only).
	Keys []Key `json:"keys,omitempty"`
}

// Snapshot is what Inspect found in a workspace.
type Snapshot struct {
	// Sockets are the pathname unix sockets, relative to the workspace.
	Sockets []string
	// SocketsCapped is true when there were more than Limits.MaxSockets.
	SocketsCapped bool
	// Items are the host-executed files, by path relative to the
	// workspace.
	Items map[string]Item
	// Protected are the states of the protected paths, by path.
	Protected map[string]Item
	// Capped says where the walk stopped short or did not go (a bound
	// reached, another file system); empty when it saw everything.
	Capped []string
}

// Inspect walks the workspace at root: its sockets, every file a host tool
// executes on its own, and the state of each protected path. It reads
// through fds only, never follows a symlink and stays on root's file
// system; lim bounds it.
func Inspect(root string, protect []string, lim Limits) (*Snapshot, error) {
	fd, err := openRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", root, err)
	}
	defer unix.Close(fd)
	dev, err := devOf(fd)
	if err != nil {
		return nil, err
	}
	w := &walker{lim: lim, dev: dev, buf: make([]byte, 32<<10), snap: &Snapshot{Items: map[string]Item{}, Protected: map[string]Item{}}}
	w.dir(fd, "", 0)
	for _, p := range protect {
		w.snap.Protected[p] = Item{Kind: KindProtected, State: protectedState(fd, p, lim.MaxFileBytes)}
	}
	sort.Strings(w.snap.Sockets)
	return w.snap, nil
}

type walker struct {
	lim     Limits
	dev     uint64
	entries int
	full    bool // the entry bound is reached
	buf     []byte
	snap    *Snapshot
}

func (w *walker) capped(format string, args ...any) {
	if len(w.snap.Capped) < 32 {
		w.snap.Capped = append(w.snap.Capped, fmt.Sprintf(format, args...))
	}
}

// list reads a directory within what is left of the entry budget.
func (w *walker) list(fd int, rel string) []entry {
	if w.full {
		return nil
	}
	ents, more, err := readDir(fd, w.lim.MaxEntries-w.entries, w.buf)
	w.entries += len(ents)
	switch {
	case err != nil:
		w.capped("%s: not read: %v", show(rel), err)
	case more:
		w.full = true
		w.capped("stopped at %d entries (in %s); the rest of the workspace was not inspected", w.lim.MaxEntries, show(rel))
	}
	return ents
}

// dir inspects an ordinary directory, or a repository that has no .git
// name (a bare one, a submodule's or worktree's gitdir elsewhere).
func (w *walker) dir(fd int, rel string, depth int) {
	ents := w.list(fd, rel)
	if isGitDir(ents) {
		w.gitDir(fd, rel, ents, depth)
		return
	}
	for _, e := range ents {
		w.visit(fd, rel, e, depth)
	}
}

func (w *walker) visit(fd int, rel string, e entry, depth int) {
	p := join(rel, e.name)
	switch {
	case e.typ == unix.DT_SOCK:
		w.socket(p)
	case e.name == ".git" && e.typ == unix.DT_DIR:
		w.sub(fd, e.name, p, depth, func(cfd int, p string, depth int) { w.gitDir(cfd, p, w.list(cfd, p), depth) })
		return
	case e.name == ".git":
		w.item(fd, e, p, KindGitFile)
	case e.name == ".envrc":
		w.item(fd, e, p, KindEnvrc)
	case e.name == "tasks.json" && path.Base(rel) == ".vscode":
		w.item(fd, e, p, KindVSCodeTasks)
	case e.typ != unix.DT_DIR && (e.name == ".devcontainer.json" || inDevcontainer(rel)):
		w.item(fd, e, p, KindDevcontainer)
	}
	if e.typ == unix.DT_DIR {
		w.sub(fd, e.name, p, depth, w.dir)
	}
}

// sub opens directory name below fd and runs fn on it, within the depth
// bound and on the workspace's own file system only.
func (w *walker) sub(fd int, name, p string, depth int, fn func(int, string, int)) {
	if depth+1 > w.lim.MaxDepth {
		w.capped("%s: deeper than %d levels, not inspected", show(p), w.lim.MaxDepth)
		return
	}
	cfd, err := openDir(fd, name)
	if err != nil {
		w.capped("%s: not opened: %v", show(p), err)
		return
	}
	defer unix.Close(cfd)
	if dev, err := devOf(cfd); err != nil || dev != w.dev {
		w.capped("%s: another file system, not inspected", show(p))
		return
	}
	fn(cfd, p, depth+1)
}

func (w *walker) socket(p string) {
	if len(w.snap.Sockets) == w.lim.MaxSockets {
		w.snap.SocketsCapped = true
		return
	}
	w.snap.Sockets = append(w.snap.Sockets, p)
}

// gitDir inspects a repository's git directory: its config files, hooks,
// worktrees' configs and submodules' repositories. Objects, refs and logs
// execute nothing and are not walked.
func (w *walker) gitDir(fd int, rel string, ents []entry, depth int) {
	for _, e := range ents {
		p := join(rel, e.name)
		switch {
		case e.typ == unix.DT_SOCK:
			w.socket(p) // git's fsmonitor daemon listens here
		case e.name == "config" || e.name == "config.worktree":
			w.item(fd, e, p, KindGitConfig)
		case e.name == "hooks" && e.typ == unix.DT_DIR:
			w.sub(fd, e.name, p, depth, w.hooks)
		case e.name == "worktrees" && e.typ == unix.DT_DIR:
			w.sub(fd, e.name, p, depth, w.worktrees)
		case e.name == "modules" && e.typ == unix.DT_DIR:
			w.sub(fd, e.name, p, depth, w.dir)
		}
	}
}

func (w *walker) hooks(fd int, rel string, _ int) {
	for _, e := range w.list(fd, rel) {
		if e.typ != unix.DT_DIR && !strings.HasSuffix(e.name, ".sample") {
			w.item(fd, e, join(rel, e.name), KindHook)
		}
	}
}

// worktrees inspects .git/worktrees/NAME/, each a linked worktree's
// gitdir with a config.worktree of its own.
func (w *walker) worktrees(fd int, rel string, depth int) {
	for _, e := range w.list(fd, rel) {
		if e.typ == unix.DT_DIR {
			w.sub(fd, e.name, join(rel, e.name), depth, func(cfd int, p string, depth int) { w.gitDir(cfd, p, w.list(cfd, p), depth) })
		}
	}
}

// item records the state of one host-executed file.
func (w *walker) item(fd int, e entry, p string, kind Kind) {
	it := Item{Kind: kind, State: typeName(e.typ)}
	switch e.typ {
	case unix.DT_LNK:
		target, err := readLink(fd, e.name)
		if err != nil {
			target = "?"
		}
		it.State = "symlink:" + target
	case unix.DT_REG:
		data, truncated, err := readFile(fd, e.name, w.lim.MaxFileBytes)
		if err != nil {
			it.State = "unreadable: " + err.Error()
			break
		}
		it.State = digest(data, truncated)
		if kind == KindGitConfig {
			it.Keys = ExecKeys(ParseConfig(data))
		}
	}
	w.snap.Items[p] = it
}

// isGitDir reports a directory that git would take for a repository's git
// directory: it holds HEAD and objects/ (a repository's own), or HEAD and
// commondir (a linked worktree's, wherever its .git file points).
func isGitDir(ents []entry) bool {
	var head, objects, commondir bool
	for _, e := range ents {
		switch {
		case e.name == "HEAD" && e.typ == unix.DT_REG:
			head = true
		case e.name == "objects" && e.typ == unix.DT_DIR:
			objects = true
		case e.name == "commondir" && e.typ == unix.DT_REG:
			commondir = true
		}
	}
	return head && (objects || commondir)
}

func inDevcontainer(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == ".devcontainer" {
			return true
		}
	}
	return false
}

// protectedState resolves a protected path below the workspace fd one
// component at a time, never following a symlink.
func protectedState(root int, p string, max int64) string {
	parts := strings.Split(p, "/")
	fd := root
	defer func() {
		if fd != root {
			unix.Close(fd)
		}
	}()
	for i, part := range parts {
		typ := lstatType(fd, part)
		last := i == len(parts)-1
		switch {
		case typ == unix.DT_UNKNOWN:
			return "absent"
		case last && typ == unix.DT_REG:
			data, truncated, err := readFile(fd, part, max)
			if err != nil {
				return "unreadable: " + err.Error()
			}
			return digest(data, truncated)
		case last && typ == unix.DT_LNK:
			target, _ := readLink(fd, part)
			return "symlink:" + target
		case last:
			return typeName(typ)
		case typ == unix.DT_LNK:
			return "through-symlink"
		case typ != unix.DT_DIR:
			return "through-file"
		}
		next, err := openDir(fd, part)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		if fd != root {
			unix.Close(fd)
		}
		fd = next
	}
	return "absent"
}

func digest(data []byte, truncated bool) string {
	sum := sha256.Sum256(data)
	s := "sha256:" + hex.EncodeToString(sum[:])
	if truncated {
		s += "+truncated"
	}
	return s
}

func typeName(t uint8) string {
	switch t {
	case unix.DT_DIR:
		return "directory"
	case unix.DT_REG:
		return "file"
	case unix.DT_LNK:
		return "symlink"
	case unix.DT_SOCK:
		return "socket"
	case unix.DT_FIFO:
		return "fifo"
	case unix.DT_CHR, unix.DT_BLK:
		return "device"
	}
	return "unknown"
}

func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// show names a relative path for a message ("." for the workspace).
func show(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
