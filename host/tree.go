package host

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"github.com/moby/sys/user"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/apparmor"
)

// Tree reads the facts that `agentbox run` (Capture) and `agentbox doctor`
// share from a host's file tree, so that the two cannot disagree: the
// invoking user's account, the cgroup layout and whether that user can
// apply limits, and AppArmor. Dir is the host's root directory: "/" for
// this machine (Live); doctor's tests pass a captured tree.
type Tree struct {
	Dir string
	// Writable reports whether the invoking user may create entries in the
	// absolute host directory dir. Nil asks the kernel (access(2) with
	// W_OK), which is only meaningful when Dir is "/".
	Writable func(dir string) bool
}

// Live is this machine's tree.
func Live() Tree { return Tree{Dir: "/"} }

// path maps an absolute host path into the tree.
func (t Tree) path(p string) string { return filepath.Join(t.Dir, filepath.Clean("/"+p)) }

func (t Tree) writable(dir string) bool {
	if t.Writable != nil {
		return t.Writable(dir)
	}
	return unix.Access(t.path(dir), unix.W_OK) == nil
}

// Account is the invoking user as the password database and the
// environment describe it.
type Account struct {
	Name string // "" when the password database has no entry for the uid
	GID  uint32
	Home string
}

// Account looks uid up in the tree's /etc/passwd (through
// github.com/moby/sys/user: the first entry with that uid wins, as in
// getpwuid). Home is $HOME when that is an absolute path, else the entry's
// home directory. A missing or unreadable passwd file gives an Account
// without a name.
func (t Tree) Account(uid uint32, getenv func(string) string) Account {
	var a Account
	users, err := user.ParsePasswdFileFilter(t.path("/etc/passwd"), func(u user.User) bool {
		return IsAccount(u.Name) && u.Uid >= 0 && uint64(u.Uid) == uint64(uid)
	})
	if err == nil && len(users) > 0 {
		u := users[0]
		a = Account{Name: u.Name, GID: uint32(u.Gid), Home: u.Home}
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		a.Home = filepath.Clean(h)
	}
	return a
}

// IsAccount is false for the names github.com/moby/sys/user decodes from
// passwd and group lines that name no account: '#' comments and NIS compat
// lines ('+', '-'), which the library reads like any other line.
func IsAccount(name string) bool {
	return name != "" && !strings.ContainsAny(name[:1], "#+-")
}

// AppArmor is apparmor.Check on the tree: the one AppArmor detection.
func (t Tree) AppArmor() apparmor.Status { return apparmor.Check(t.Dir) }

// CgroupRoot is where the cgroup hierarchy is mounted.
const CgroupRoot = "/sys/fs/cgroup"

// Cgroup modes.
const (
	CgroupV2     = "v2"     // unified: cgroup2 at /sys/fs/cgroup
	CgroupHybrid = "hybrid" // v1 controllers, cgroup2 elsewhere (/sys/fs/cgroup/unified)
	CgroupV1     = "v1"     // v1 controllers only
)

// Cgroup is the cgroup layout and whether the invoking user can apply
// memory and pids limits.
type Cgroup struct {
	// Mode is CgroupV2, CgroupHybrid, CgroupV1 or "" (no cgroup mounted,
	// or the mount table could not be read: Err says which).
	Mode string
	// CanLimit is false with Reason saying why, and Fix how to change it
	// where there is a fix.
	CanLimit    bool
	Reason, Fix string
	Err         string
}

// Cgroup reads the cgroup layout from the mount table and decides whether
// euid can apply limits: root always can; an ordinary user only on cgroup
// v2, when the parent of its own cgroup delegates the memory and pids
// controllers and the user may write that directory (where the runtime
// creates the sandbox's cgroup).
func (t Tree) Cgroup(euid uint32) Cgroup {
	var c Cgroup
	ms, err := t.Mounts()
	if err != nil {
		c.Err = err.Error()
	}
	c.Mode = cgroupMode(ms)
	c.CanLimit, c.Reason, c.Fix = t.canLimit(euid, c.Mode)
	return c
}

// cgroupMode classifies the cgroup mounts. The hierarchy is unified when
// the filesystem visible at CgroupRoot (the last mount there) is cgroup2,
// as statfs(2) on it says and as runc and crun decide.
func cgroupMode(ms []*mountinfo.Info) string {
	v1, v2, top := false, false, ""
	for _, m := range ms {
		switch m.FSType {
		case "cgroup":
			v1 = true
		case "cgroup2":
			v2 = true
		}
		if m.Mountpoint == CgroupRoot {
			top = m.FSType
		}
	}
	switch {
	case top == "cgroup2":
		return CgroupV2
	case v1 && v2:
		return CgroupHybrid
	case v1:
		return CgroupV1
	}
	return ""
}

func (t Tree) canLimit(euid uint32, mode string) (ok bool, reason, fix string) {
	if euid == 0 {
		return true, "", ""
	}
	if mode != CgroupV2 {
		return false, "cgroup " + orNotMounted(mode) + " gives ordinary users no delegated controllers",
			"boot with systemd.unified_cgroup_hierarchy=1, or run agentbox as root"
	}
	own, err := os.ReadFile(t.path("/proc/self/cgroup"))
	if err != nil {
		return false, "cannot read /proc/self/cgroup", ""
	}
	rel, found := unifiedCgroup(own)
	if !found {
		return false, "/proc/self/cgroup names no cgroup v2 path", ""
	}
	dir := path.Join(CgroupRoot, path.Dir(rel))
	ctrl, err := os.ReadFile(t.path(path.Join(dir, "cgroup.subtree_control")))
	have := strings.Fields(string(ctrl))
	if err != nil || !slices.Contains(have, "memory") || !slices.Contains(have, "pids") {
		return false, "memory and pids controllers are not delegated to " + dir,
			"enable systemd user delegation: https://rootlesscontaine.rs/getting-started/common/cgroup2/"
	}
	if !t.writable(dir) {
		return false, dir + " is not writable by this user", ""
	}
	return true, "", ""
}

// unifiedCgroup finds the "0::PATH" line of /proc/self/cgroup.
func unifiedCgroup(b []byte) (string, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rel, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "0::"); ok {
			return rel, true
		}
	}
	return "", false
}

func orNotMounted(mode string) string {
	if mode == "" {
		return "(not mounted)"
	}
	return mode
}
