package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/workspace"
)

// UserFileName is the user's own policy in ConfigDir, applied to every run.
const UserFileName = "policy.yaml"

// ConfigDir is the user's agentbox configuration directory:
// $AGENTBOX_CONFIG_DIR, else $XDG_CONFIG_HOME/agentbox, else
// $HOME/.config/agentbox. It holds the user's policy and the trust store,
// and must never be inside a workspace.
func ConfigDir(getenv func(string) string) (string, error) {
	if d := getenv("AGENTBOX_CONFIG_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("AGENTBOX_CONFIG_DIR=%q is not an absolute path; set it to one", d)
		}
		return filepath.Clean(d), nil
	}
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) { // the XDG spec says to ignore a relative one
		return filepath.Join(d, "agentbox"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "agentbox"), nil
	}
	return "", errors.New("cannot find agentbox's configuration directory: HOME is not set to an absolute path; set HOME or AGENTBOX_CONFIG_DIR")
}

// Sources are the places one launch's policy may come from. Only the
// user's own files are read as they are; a file in the workspace is the
// agent's side and is used only in the exact content the user trusted.
type Sources struct {
	// ConfigDir is the user's configuration directory (ConfigDir()). Its
	// policy.yaml, when it exists, applies first. Empty skips it.
	ConfigDir string
	// Explicit is the file given with --policy; empty means the
	// workspace's agentbox.yaml, when it exists.
	Explicit string
	// Workspace is the workspace directory (absolute).
	Workspace string
	// EUID is the invoking user's effective uid: the owner, besides root,
	// that the user's own files may have.
	EUID uint32
}

// SourcesFor names the policy files one invocation may read: the user's
// own (ConfigDir), the workspace's (workspace, "" for cwd) and the
// explicit file ("" for none, else --policy), relative paths taken from
// cwd, for a launcher of effective uid euid.
func SourcesFor(cwd, workspace, explicit string, euid uint32, getenv func(string) string) (Sources, error) {
	cfg, err := ConfigDir(getenv)
	if err != nil {
		return Sources{}, err
	}
	if workspace == "" {
		workspace = cwd
	}
	s := Sources{ConfigDir: cfg, Workspace: absFrom(cwd, workspace), EUID: euid}
	if explicit != "" {
		s.Explicit = absFrom(cwd, explicit)
	}
	return s, nil
}

func absFrom(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// SourceKind says why a policy file was believed.
type SourceKind string

// Source kinds.
const (
	SourceUser      SourceKind = "user"      // ConfigDir/policy.yaml: the user's own file
	SourceExplicit  SourceKind = "explicit"  // --policy FILE outside the workspace
	SourceWorkspace SourceKind = "workspace" // a workspace file, trusted by digest
)

// Loaded is one policy file that went into a launch; the ledger records it.
type Loaded struct {
	Path   string     `json:"path"`
	Kind   SourceKind `json:"kind"`
	Digest string     `json:"digest"`
}

// Load reads the policy files of s in order (the user's policy, then
// --policy or the workspace's agentbox.yaml), validates each, and merges
// them. A workspace file (a --policy file inside the workspace included)
// that the trust store does not hold in this exact content is refused
// with an *UntrustedError.
func Load(s Sources) (Policy, []Loaded, error) {
	var (
		merged Policy
		loaded []Loaded
	)
	if err := s.checkConfigDir(); err != nil {
		return Policy{}, nil, err
	}
	for _, f := range s.files() {
		p, l, err := f.load(s)
		if errors.Is(err, fs.ErrNotExist) && !f.required {
			continue
		}
		if err != nil {
			return Policy{}, nil, err
		}
		if len(loaded) == 0 {
			merged = p // the first file is the base, as given (env.allow: [] passes nothing)
		} else {
			merged = merged.Merge(p)
		}
		loaded = append(loaded, l)
	}
	return merged, loaded, nil
}

// checkConfigDir refuses a configuration directory that someone else could
// write: its policy and trust store would then be theirs.
func (s Sources) checkConfigDir() error {
	if s.ConfigDir == "" {
		return nil
	}
	var st unix.Stat_t
	err := unix.Lstat(s.ConfigDir, &st)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("configuration directory: %w", err)
	}
	fi := FileInfo{Mode: fileMode(uint32(st.Mode)), UID: st.Uid, GID: st.Gid}
	if !fi.Mode.IsDir() {
		return &InputError{File: s.ConfigDir, Msg: "agentbox's configuration directory is not a directory (" + kindOf(fi.Mode) + ")", Fix: "remove it, or set AGENTBOX_CONFIG_DIR to a directory of yours"}
	}
	return CheckOwner(s.ConfigDir, fi, s.EUID)
}

// candidate is one policy file Load may read.
type candidate struct {
	path     string
	kind     SourceKind
	required bool // --policy names a file that must exist
}

func (s Sources) files() []candidate {
	var out []candidate
	if s.ConfigDir != "" {
		out = append(out, candidate{path: filepath.Join(s.ConfigDir, UserFileName), kind: SourceUser})
	}
	switch {
	case s.Explicit == "":
		out = append(out, candidate{path: filepath.Join(s.Workspace, FileName), kind: SourceWorkspace})
	case resolvedWithin(s.Explicit, s.Workspace):
		out = append(out, candidate{path: s.Explicit, kind: SourceWorkspace, required: true})
	default:
		out = append(out, candidate{path: s.Explicit, kind: SourceExplicit, required: true})
	}
	return out
}

func (c candidate) load(s Sources) (Policy, Loaded, error) {
	data, fi, err := ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) && c.required {
		return Policy{}, Loaded{}, &InputError{Field: "--policy", Msg: c.path + " does not exist", Fix: "check the path"}
	}
	if err != nil {
		return Policy{}, Loaded{}, err
	}
	if err := c.believe(s, data, fi); err != nil {
		return Policy{}, Loaded{}, err
	}
	p, err := ParseChecked(c.path, data, c.kind)
	if err != nil {
		return Policy{}, Loaded{}, err
	}
	if p.Workspace != "" && !filepath.IsAbs(p.Workspace) {
		p.Workspace = filepath.Join(filepath.Dir(c.path), p.Workspace)
	}
	return p, Loaded{Path: c.path, Kind: c.kind, Digest: Digest(data)}, nil
}

// believe decides whether the file's content may be used: the user's own
// files by owner and mode, a workspace file by its trusted digest.
func (c candidate) believe(s Sources, data []byte, fi FileInfo) error {
	if c.kind != SourceWorkspace {
		return CheckOwner(c.path, fi, s.EUID)
	}
	if s.ConfigDir == "" {
		return &UntrustedError{Path: c.path, Digest: Digest(data)}
	}
	return s.Store().Check(c.path, data)
}

// ParseChecked parses a policy file of the given kind and validates it:
// what Load applies to every file, and what `agentbox trust` checks before
// it trusts one. A workspace file may not set workspace: the file's
// directory is the workspace, and a file that moves the workspace
// elsewhere is how an agent reaches another directory.
func ParseChecked(path string, data []byte, kind SourceKind) (Policy, error) {
	p, src, err := Parse(path, data)
	if err != nil {
		return Policy{}, err
	}
	if kind == SourceWorkspace && p.Workspace != "" {
		return Policy{}, src.errorf("workspace", "a workspace's agentbox.yaml applies to the directory it is in; set another workspace with --workspace or in your own "+UserFileName, "not allowed in a workspace's policy file")
	}
	if kind == SourceWorkspace && p.Protect != nil {
		for _, d := range workspace.DefaultProtectPaths() {
			if !slices.Contains(p.Protect, d) {
				return Policy{}, src.errorf("protect", "a workspace's file may add protected paths but not remove one; unprotect it in your own "+UserFileName+" or a --policy file", "drops %s from the protected paths", d)
			}
		}
	}
	return p, Validate(p, src)
}

// Store is the trust store of s's configuration directory.
func (s Sources) Store() TrustStore { return TrustStore{Dir: filepath.Join(s.ConfigDir, "trusted")} }

// resolvedWithin reports whether file is dir or lies beneath it, after
// resolving the symlinks of dir and of file's directory (a path that
// cannot be resolved is compared as given).
func resolvedWithin(file, dir string) bool {
	f := filepath.Clean(file)
	if r, err := filepath.EvalSymlinks(filepath.Dir(f)); err == nil {
		f = filepath.Join(r, filepath.Base(f))
	}
	d := filepath.Clean(dir)
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	return within(f, d)
}
