package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// RunDir is one run's directory under the run root: the bundle, the
// sockets, and meta.json saying what to clean if the launcher dies. The
// launcher holds an exclusive lock on it for the run's whole life, which is
// how a later invocation tells a live run from a stale one.
type RunDir struct {
	Path string
	ID   string
	lock *os.File
}

// Meta records what a run set up, written before each step that leaves
// something behind, so that a crashed run can be cleaned from it alone.
type Meta struct {
	RunID       string    `json:"run_id"`
	LauncherPid int       `json:"launcher_pid"`
	Started     time.Time `json:"started"`
	Runtime     Runtime   `json:"runtime"`
	Cgroup      string    `json:"cgroup,omitempty"`
	InitPid     int       `json:"init_pid,omitempty"`
	PidNS       uint64    `json:"pid_ns,omitempty"`
	// RuntimePid and RuntimeStart name a runtime that runs the sandbox in
	// the foreground (Target.RuntimePid).
	RuntimePid   int    `json:"runtime_pid,omitempty"`
	RuntimeStart uint64 `json:"runtime_start,omitempty"`
	// Grant is set while the agent's host uid holds an ACL on a workspace.
	Grant *Grant `json:"grant,omitempty"`
	// Granted is what the grant did, once it is done.
	Granted *GrantReport `json:"granted,omitempty"`
	// Lease names the id range allocated to the run, for release.
	Lease string `json:"lease,omitempty"`
	// Command is the agent's argv, for the records of a later cleanup.
	Command []string `json:"command,omitempty"`
	// Canaries are files planted outside the run directory, to remove.
	Canaries []string `json:"canaries,omitempty"`
}

const (
	runsDir  = "runs"
	lockFile = "lock"
	metaFile = "meta.json"
)

// CreateRunDir makes root/runs/id, locked by this process. Directories are
// mode 0711: the sandbox's mapped ids must traverse them to reach the
// bundle, and nobody may list them.
//
// The directory is made and locked under a name FindStale passes over
// (newPrefix), then renamed into place, so that it is never under its own
// name without its lock held: another launcher's gc, which takes the lock
// of every run directory it can, would otherwise take a directory made an
// instant before and clean it as a crashed run's.
func CreateRunDir(root, id string) (*RunDir, error) {
	runs := filepath.Join(root, runsDir)
	if err := os.MkdirAll(runs, 0o711); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	_ = os.Chmod(root, 0o711)
	_ = os.Chmod(runs, 0o711)
	path, tmp := filepath.Join(runs, id), filepath.Join(runs, newPrefix+id)
	if err := os.Mkdir(tmp, 0o711); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	lock, err := lockDir(tmp, true)
	if err == nil {
		err = renameNoReplace(tmp, path)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		_ = RemoveTree(tmp)
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return &RunDir{Path: path, ID: id, lock: lock}, nil
}

// newPrefix marks a run directory CreateRunDir is still making.
const newPrefix = ".new-"

// abandonedAfter is how old an unlocked directory CreateRunDir was making
// must be before RemoveAbandoned takes it for a crashed launcher's: its
// maker holds it for a mkdir, an open and a rename.
const abandonedAfter = time.Minute

// RemoveAbandoned removes the directories under root that a launcher that
// died inside CreateRunDir left (nothing in them but the lock).
func RemoveAbandoned(root string) error {
	entries, err := os.ReadDir(filepath.Join(root, runsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	var errs []error
	for _, e := range entries {
		info, err := e.Info()
		if !strings.HasPrefix(e.Name(), newPrefix) || !e.IsDir() || err != nil || time.Since(info.ModTime()) < abandonedAfter {
			continue
		}
		path := filepath.Join(root, runsDir, e.Name())
		lock, err := lockDir(path, false)
		if err != nil {
			continue // its maker is alive after all
		}
		errs = append(errs, RemoveTree(path))
		lock.Close()
	}
	return errors.Join(errs...)
}

// lockDir takes the run directory's lock; with wait false it fails at once
// when another process holds it.
func lockDir(path string, wait bool) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(path, lockFile), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run lock: %w", err)
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, fmt.Errorf("run lock: %w", err)
	}
	return f, nil
}

// Bundle is the bundle directory inside the run directory.
func (d *RunDir) Bundle() string { return filepath.Join(d.Path, "bundle") }

// File names a file in the run directory.
func (d *RunDir) File(name string) string { return filepath.Join(d.Path, name) }

// WriteMeta records m atomically.
func (d *RunDir) WriteMeta(m Meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(d.File(metaFile), data, 0o600)
}

// ReadMeta reads the run's record; a run that died before writing one
// returns a Meta with only RunID set.
func (d *RunDir) ReadMeta() (Meta, error) {
	data, err := os.ReadFile(d.File(metaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{RunID: d.ID}, nil
	}
	if err != nil {
		return Meta{}, err
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return Meta{RunID: d.ID}, fmt.Errorf("run %s: meta.json: %w", d.ID, err)
	}
	return m, nil
}

// Remove deletes the run directory (see RemoveTree) and releases its lock.
func (d *RunDir) Remove() error {
	err := RemoveTree(d.Path)
	d.Unlock()
	return err
}

// Unlock releases the lock without removing anything.
func (d *RunDir) Unlock() {
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
}

// FindStale returns the run directories under root whose launcher is gone,
// each locked by this process for cleaning. Live runs are skipped.
func FindStale(root string) ([]*RunDir, error) {
	entries, err := os.ReadDir(filepath.Join(root, runsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var stale []*RunDir
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), newPrefix) {
			continue // being made (CreateRunDir), or left by a launcher that died there (RemoveAbandoned)
		}
		path := filepath.Join(root, runsDir, e.Name())
		lock, err := lockDir(path, false)
		if err != nil {
			continue // a live launcher holds it
		}
		stale = append(stale, &RunDir{Path: path, ID: e.Name(), lock: lock})
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].ID < stale[j].ID })
	return stale, nil
}
