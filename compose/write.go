package compose

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ConflictError says which files already exist with other contents; nothing
// was written.
type ConflictError struct {
	Dir   string
	Files []string
}

// UsageError marks the error as the user's to fix (exit 2) to launcher.KindOf,
// which does not link this package.
func (e *ConflictError) UsageError() bool { return true }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s already holds %s with other contents; nothing was written (pass --force to replace them, or choose another --out)",
		e.Dir, strings.Join(e.Files, ", "))
}

// WriteResult says what Write did with each file.
type WriteResult struct {
	Written, Unchanged, Kept []string
}

// Write writes files into dir, each atomically (a temporary file in the same
// directory, synced, then renamed over the name). A file whose contents are
// already on disk is left alone; one that differs is replaced only with
// force, and otherwise nothing at all is written (*ConflictError). Secret
// files are created empty when absent and are never read or replaced. A name
// that exists as anything but a regular file is refused.
func Write(dir string, files []File, force bool) (WriteResult, error) {
	var res WriteResult
	var conflicts []string
	for _, f := range files {
		state, err := compare(dir, f)
		if err != nil {
			return res, err
		}
		if state == differs && !force {
			conflicts = append(conflicts, f.Name)
		}
	}
	if len(conflicts) > 0 {
		return res, &ConflictError{Dir: dir, Files: conflicts}
	}
	for _, f := range files {
		if err := writeOne(dir, f, &res); err != nil {
			return res, fmt.Errorf("write %s: %w", filepath.Join(dir, f.Name), err)
		}
	}
	return res, nil
}

type fileState int

const (
	absent fileState = iota
	same
	differs
)

// compare reports whether f is absent from dir, there with the same
// contents and mode, or there with others. Secret files that exist count as
// the same: their contents are the user's key.
func compare(dir string, f File) (fileState, error) {
	p := filepath.Join(dir, filepath.FromSlash(f.Name))
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return absent, nil
	case err != nil:
		return 0, err
	case !fi.Mode().IsRegular():
		return 0, fmt.Errorf("%s exists and is not a regular file (%s); remove it or choose another --out", p, fi.Mode().Type())
	case f.Secret:
		return same, nil
	}
	old, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	if bytes.Equal(old, f.Data) && fi.Mode().Perm() == f.Mode.Perm() {
		return same, nil
	}
	return differs, nil
}

func writeOne(dir string, f File, res *WriteResult) error {
	state, err := compare(dir, f)
	switch {
	case err != nil:
		return err
	case state == same && f.Secret:
		res.Kept = append(res.Kept, f.Name)
		return nil
	case state == same:
		res.Unchanged = append(res.Unchanged, f.Name)
		return nil
	}
	p := filepath.Join(dir, filepath.FromSlash(f.Name))
	parent := filepath.Dir(p)
	dirMode := fs.FileMode(0o755)
	if f.Secret {
		dirMode = 0o700
	}
	if err := os.MkdirAll(parent, dirMode); err != nil {
		return err
	}
	if err := atomicWrite(p, f); err != nil {
		return err
	}
	res.Written = append(res.Written, f.Name)
	return nil
}

// atomicWrite writes f next to p and renames it into place. A secret file is
// linked into place instead, which fails when one appeared meanwhile: a key
// is never replaced.
func atomicWrite(p string, f File) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(f.Data); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Chmod(f.Mode.Perm()); err == nil && f.Secret && os.Geteuid() == 0 {
		err = tmp.Chown(int(f.UID), int(f.GID))
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if f.Secret {
		if err = os.Link(tmp.Name(), p); err != nil {
			return err
		}
		return os.Remove(tmp.Name())
	}
	return os.Rename(tmp.Name(), p)
}
