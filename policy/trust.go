package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// TrustStore remembers which workspace policy files the user has trusted,
// by path and by the digest of their exact content, like `direnv allow`.
// It lives in the user's configuration directory, never in a workspace:
// a workspace is the agent's side, and a digest the agent could write
// would prove nothing. Each entry keeps the trusted content too, so that a
// changed file can be refused with a diff against what was trusted.
type TrustStore struct {
	// Dir is the store's directory (ConfigDir()/trusted).
	Dir string
}

// TrustEntry is one trusted file.
type TrustEntry struct {
	Path    string    `json:"path"`
	Digest  string    `json:"digest"`
	Content string    `json:"content"`
	Trusted time.Time `json:"trusted"`
}

// Digest is the digest a trust entry records: sha256 of the file's bytes.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// entryFile names the entry of path: one file per trusted path, named by
// the digest of the path so that any path fits in one name.
func (s TrustStore) entryFile(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Lookup returns the entry for path, if there is one.
func (s TrustStore) Lookup(path string) (TrustEntry, bool, error) {
	data, _, err := ReadFile(s.entryFile(path))
	if errors.Is(err, fs.ErrNotExist) {
		return TrustEntry{}, false, nil
	}
	if err != nil {
		return TrustEntry{}, false, fmt.Errorf("trust store: %w", err)
	}
	var e TrustEntry
	if err := json.Unmarshal(data, &e); err != nil || e.Path != path {
		return TrustEntry{}, false, fmt.Errorf("trust store: %s is damaged; remove it and trust the file again", s.entryFile(path))
	}
	return e, true, nil
}

// Check returns nil when content is what the user trusted for path, and an
// *UntrustedError otherwise (with a diff when an earlier content was
// trusted).
func (s TrustStore) Check(path string, content []byte) error {
	e, ok, err := s.Lookup(path)
	if err != nil {
		return err
	}
	digest := Digest(content)
	if ok && e.Digest == digest {
		return nil
	}
	u := &UntrustedError{Path: path, Digest: digest, Diff: LineDiff("", string(content))}
	if ok {
		u.Previous = &e
		u.Diff = LineDiff(e.Content, string(content))
	}
	return u
}

// Trust records content as trusted for path, replacing an earlier entry.
// The entry is written to a temporary file and renamed, so a crash leaves
// the old entry or the new one, never half of one.
func (s TrustStore) Trust(path string, content []byte, now time.Time) (TrustEntry, error) {
	e := TrustEntry{Path: path, Digest: Digest(content), Content: string(content), Trusted: now.UTC()}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return e, err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return e, fmt.Errorf("trust store: %w", err)
	}
	tmp, err := os.CreateTemp(s.Dir, ".entry-*")
	if err != nil {
		return e, fmt.Errorf("trust store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return e, fmt.Errorf("trust store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return e, fmt.Errorf("trust store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.entryFile(path)); err != nil {
		return e, fmt.Errorf("trust store: %w", err)
	}
	return e, nil
}

// Revoke forgets path; it reports whether there was an entry.
func (s TrustStore) Revoke(path string) (bool, error) {
	err := os.Remove(s.entryFile(path))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// List returns every entry, sorted by path.
func (s TrustStore) List() ([]TrustEntry, error) {
	names, err := filepath.Glob(filepath.Join(s.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []TrustEntry
	for _, n := range names {
		data, _, err := ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("trust store: %w", err)
		}
		var e TrustEntry
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("trust store: %s is damaged: %w", n, err)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// UntrustedError refuses a workspace policy file that the user has not
// trusted in this exact content. The CLI maps it to exit code 3.
type UntrustedError struct {
	Path   string
	Digest string
	// Previous is the entry for an earlier content, nil when the file was
	// never trusted.
	Previous *TrustEntry
	// Diff is Previous's content against the file's, in unified style.
	Diff string
}

func (e *UntrustedError) Error() string {
	var b strings.Builder
	if e.Previous == nil {
		fmt.Fprintf(&b, "%s is not trusted: the workspace is the agent's side (an earlier run or the repository's author may have written this file), so agentbox does not use it until you have read it and trusted this exact content. It says:\n%s", e.Path, clip(e.Diff))
	} else {
		fmt.Fprintf(&b, "%s changed since you trusted it on %s; agentbox does not use it until you trust the new content. The change:\n%s", e.Path, e.Previous.Trusted.Format(time.DateOnly), clip(e.Diff))
	}
	fmt.Fprintf(&b, "\nif you wrote it, review it and run: agentbox trust --digest %s %s", e.Digest, shellQuote(e.Path))
	return b.String()
}

// maxShownLines bounds the diff a refusal prints; `agentbox trust --check`
// prints it whole.
const maxShownLines = 60

func clip(diff string) string {
	lines := strings.Split(diff, "\n")
	if len(lines) <= maxShownLines {
		return diff
	}
	return strings.Join(lines[:maxShownLines], "\n") + fmt.Sprintf("\n… %d more lines (agentbox trust --check shows them all)", len(lines)-maxShownLines)
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
