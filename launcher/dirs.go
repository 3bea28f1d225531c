package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/ledger"
)

// Dirs are where agentbox keeps things: the state directory (the ledger)
// and the run root (run directories, id leases, runtime state), which is
// on a tmpfs where possible so that a reboot clears it with the sandboxes.
//
// Both hold what agentbox later acts on (a run's meta.json names the
// runtime to call and the workspace to revoke), so both must be the
// invoking user's alone: a directory, not a symlink, owned by the
// effective uid, writable by no one else, in a parent no one else can
// rename it in. Otherwise agentbox refuses, with the command that fixes
// it; /tmp/agentbox-UID made by another user is the case this catches.
type Dirs struct {
	// State holds the ledger; RunRoot the run directories, id leases and
	// runtime state.
	State   string
	RunRoot string
	euid    int
}

// FindDirs finds the directories from the environment (the ledger's
// AGENTBOX_STATE_DIR rules, and runRoot's) and checks both.
func FindDirs(getenv func(string) string) (Dirs, error) {
	euid := os.Geteuid()
	state, err := ledger.StateDir(getenv, euid)
	if err != nil {
		return Dirs{}, err
	}
	d := Dirs{State: state, RunRoot: runRoot(getenv, euid), euid: euid}
	return d, d.check()
}

func (d Dirs) isZero() bool { return d.State == "" && d.RunRoot == "" }

// runRoot is $AGENTBOX_RUN_ROOT, /run/agentbox for root, else
// $XDG_RUNTIME_DIR/agentbox, else /tmp/agentbox-UID.
func runRoot(getenv func(string) string, euid int) string {
	if r := getenv("AGENTBOX_RUN_ROOT"); filepath.IsAbs(r) {
		return r
	}
	if euid == 0 {
		return rootRunRoot // user.go, user_darwin.go
	}
	if x := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		return filepath.Join(x, "agentbox")
	}
	return filepath.Join(os.TempDir(), "agentbox-"+strconv.Itoa(euid))
}

func (d Dirs) leases() string { return filepath.Join(d.RunRoot, "userns") }

func (d Dirs) runtimeRoot(name string) string { return filepath.Join(d.RunRoot, "runtime", name) }

// grantLocks holds the per-workspace locks of engine.Grant.
func (d Dirs) grantLocks() string { return filepath.Join(d.RunRoot, "grants") }

// ensure creates the state directory and the run root, then checks them.
func (d Dirs) ensure() error {
	for _, p := range []string{d.State, d.RunRoot} {
		if err := os.MkdirAll(p, 0o711); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	return d.check()
}

// check refuses a state directory or run root that someone other than the
// invoking user controls; one that does not exist yet is fine.
func (d Dirs) check() error {
	if err := checkPrivateDir(d.RunRoot, d.euid, runRootFix(d.RunRoot)); err != nil {
		return fmt.Errorf("run root: %w", err)
	}
	if err := checkPrivateDir(d.State, d.euid, stateDirFix(d.State)); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}

// runRootFix says how to get a run root of one's own: it holds nothing
// that outlives the runs, so removing it is safe when no run is live.
func runRootFix(p string) func(problem) string {
	return func(pr problem) string {
		if pr == badParent {
			return "set XDG_RUNTIME_DIR (or AGENTBOX_RUN_ROOT) to a directory only you can write"
		}
		return fmt.Sprintf("remove it (rm -rf %s, as its owner or root) with no run live, or set XDG_RUNTIME_DIR (or AGENTBOX_RUN_ROOT) to a directory only you can write", p)
	}
}

// stateDirFix keeps the ledger where it can be kept: a mode is fixed in
// place, a directory someone else owns is moved aside.
func stateDirFix(p string) func(problem) string {
	return func(pr problem) string {
		switch pr {
		case badMode:
			return fmt.Sprintf("run chmod go-w %s (and check its ledger, which others could write)", p)
		case badParent:
			return "set AGENTBOX_STATE_DIR to a directory only you can write"
		case badOwner: // moved aside, below
		}
		return fmt.Sprintf("move it aside (mv %s %s.untrusted, as its owner or root), or set AGENTBOX_STATE_DIR to a directory only you can write", p, p)
	}
}

// problem is what is wrong with a directory.
type problem int

const (
	badOwner problem = iota
	badMode
	badParent
)

// checkPrivateDir checks that path, if it exists, is a directory (not a
// symlink) owned by euid and writable by nobody else, and that its parent
// lets no one else rename it (owned by root or euid, and not writable by
// others unless sticky, as /tmp is). fix says how to repair each problem.
func checkPrivateDir(path string, euid int, fix func(problem) string) error {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	why, pr := privateDirProblem(&st, euid)
	if why == "" {
		why, pr = parentProblem(filepath.Dir(path), euid)
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s %s, so another user could plant state that agentbox would act on; %s", path, why, fix(pr))
}

func privateDirProblem(st *unix.Stat_t, euid int) (string, problem) {
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return "is a symlink", badOwner
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return "is not a directory", badOwner
	case int(st.Uid) != euid:
		return fmt.Sprintf("is owned by uid %d, not by you (uid %d)", st.Uid, euid), badOwner
	case st.Mode&0o022 != 0:
		return fmt.Sprintf("is writable by others (mode %04o)", st.Mode&0o7777), badMode
	}
	return "", 0
}

func parentProblem(parent string, euid int) (string, problem) {
	var st unix.Stat_t
	if err := unix.Stat(parent, &st); err != nil {
		return "has a parent agentbox cannot check (" + err.Error() + ")", badParent
	}
	switch {
	case st.Uid != 0 && int(st.Uid) != euid:
		return fmt.Sprintf("is in %s, owned by uid %d", parent, st.Uid), badParent
	case st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
		return fmt.Sprintf("is in %s, which others can write (mode %04o) and is not sticky", parent, st.Mode&0o7777), badParent
	}
	return "", 0
}

// Ledger is the ledger in the state directory.
func (d Dirs) Ledger() *ledger.Ledger { return ledger.Open(filepath.Join(d.State, ledger.FileName)) }
