package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TrustStatus is what `agentbox trust` found and did for one file.
type TrustStatus struct {
	Path    string `json:"path"`
	Digest  string `json:"digest,omitempty"`
	Trusted bool   `json:"trusted"`
	// Changed is true when an earlier content was trusted.
	Changed bool `json:"changed,omitempty"`
	// Diff is the change from the content trusted before, or the whole
	// file as added lines when none was.
	Diff string `json:"diff,omitempty"`
	// Action is what the invocation did: "trusted", "unchanged",
	// "checked", "revoked" or "listed".
	Action string `json:"action"`
	// Since is when a listed file was trusted.
	Since time.Time `json:"trusted_at,omitzero"`
}

// Text says st in words for people: whether the file is trusted now and,
// for a change or a first trust, the diff or the file.
func (st TrustStatus) Text() string {
	switch {
	case st.Action == "listed":
		return fmt.Sprintf("%s  %s  %s", st.Since.Format(time.DateOnly), st.Digest, st.Path)
	case st.Action == "revoked":
		return fmt.Sprintf("revoked %s: runs refuse it until it is trusted again", st.Path)
	case st.Action == "unchanged" || (st.Action == "checked" && st.Trusted):
		return fmt.Sprintf("%s is trusted (%s)", st.Path, st.Digest)
	case st.Action == "checked" && st.Changed:
		return fmt.Sprintf("%s changed since it was trusted; the change:\n%s", st.Path, st.Diff)
	case st.Action == "checked":
		return fmt.Sprintf("%s is not trusted (%s); it says:\n%s", st.Path, st.Digest, indent(st.Diff))
	case st.Changed:
		return fmt.Sprintf("trusted %s (%s); the change from the content trusted before:\n%s", st.Path, st.Digest, st.Diff)
	}
	return fmt.Sprintf("trusted %s (%s):\n%s", st.Path, st.Digest, indent(st.Diff))
}

// RevokeFile forgets path: runs refuse it again until it is trusted. ok is
// false when it was not trusted, and nothing was done.
func (s TrustStore) RevokeFile(path string) (st TrustStatus, ok bool, err error) {
	had, err := s.Revoke(path)
	return TrustStatus{Path: path, Action: "revoked"}, had, err
}

// Listed is every trusted file as a status, "listed".
func (s TrustStore) Listed() ([]TrustStatus, error) {
	entries, err := s.List()
	out := make([]TrustStatus, 0, len(entries))
	for _, e := range entries {
		out = append(out, TrustStatus{Path: e.Path, Digest: e.Digest, Trusted: true, Action: "listed", Since: e.Trusted})
	}
	return out, err
}

// indent strips LineDiff's "+ " marks of a first-time trust into a plain
// indented listing of the file.
func indent(diff string) string {
	lines := strings.Split(diff, "\n")
	for i, l := range lines {
		lines[i] = "  " + strings.TrimPrefix(l, "+ ")
	}
	return strings.Join(lines, "\n")
}

// ChangedError refuses to trust a file whose digest is no longer the one
// the user reviewed (agentbox trust --digest).
type ChangedError struct {
	Path, Digest, Reviewed string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s is %s now, not %s: it changed since you reviewed it; nothing was trusted", e.Path, e.Digest, e.Reviewed)
}

// TrustTarget is the absolute path of the file `agentbox trust` acts on:
// target, a FILE or a DIR (its agentbox.yaml), relative to cwd; "" is
// cwd. The directory part is the user's to name, symlinks included; the
// file itself is read without following a link, like every policy file.
func TrustTarget(cwd, target string) (string, error) {
	if target == "" {
		target = cwd
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(cwd, target)
	}
	target = filepath.Clean(target)
	if fi, err := os.Lstat(target); err == nil && fi.IsDir() {
		target = filepath.Join(target, FileName)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(target))
	if err != nil {
		return "", &InputError{Msg: fmt.Sprintf("%s: %v", filepath.Dir(target), err)}
	}
	return filepath.Join(dir, filepath.Base(target)), nil
}

// Status reads path as every policy file is read (ReadFile) and says
// whether its content is the one trusted, returning the bytes read. A file
// that cannot be read is an *InputError; a store that cannot be read is
// not.
func (s TrustStore) Status(path string) (TrustStatus, []byte, error) {
	data, _, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return TrustStatus{}, nil, &InputError{Msg: path + " does not exist; there is nothing to trust"}
	}
	if err != nil {
		return TrustStatus{}, nil, asInput(err)
	}
	st := TrustStatus{Path: path, Digest: Digest(data)}
	var untrusted *UntrustedError
	switch err := s.Check(path, data); {
	case errors.As(err, &untrusted):
		st.Changed, st.Diff = untrusted.Previous != nil, untrusted.Diff
	case err != nil:
		return st, nil, err
	default:
		st.Trusted = true
	}
	return st, data, nil
}

// TrustFile trusts path's current content, provided it still has digest
// ("" accepts any) and loads as a workspace policy; a digest that changed
// is a *ChangedError, a file that would not load an *InputError.
func (s TrustStore) TrustFile(path, digest string, now time.Time) (TrustStatus, error) {
	st, data, err := s.Status(path)
	if err != nil {
		return st, err
	}
	if digest != "" && digest != st.Digest {
		return st, &ChangedError{Path: path, Digest: st.Digest, Reviewed: digest}
	}
	if _, err := ParseChecked(path, data, SourceWorkspace); err != nil {
		return st, fmt.Errorf("%w\nnothing was trusted: fix the file first", asInput(err))
	}
	st.Action = "unchanged"
	if !st.Trusted {
		if _, err := s.Trust(path, data, now); err != nil {
			return st, err
		}
		st.Action, st.Trusted = "trusted", true
	}
	return st, nil
}

// asInput makes err an *InputError, keeping one that is.
func asInput(err error) error {
	if ie := (*InputError)(nil); errors.As(err, &ie) {
		return err
	}
	return &InputError{Msg: err.Error()}
}
