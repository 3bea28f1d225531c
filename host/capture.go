package host

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opencontainers/selinux/go-selinux"
	"github.com/opencontainers/selinux/go-selinux/label"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/policy"
)

// Capture reads the facts about this host and process. The caller fills
// Host.MapIDs once an id range is allocated.
func Capture() (policy.Host, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return policy.Host{}, fmt.Errorf("working directory: %w", err)
	}
	h := policy.Host{
		EUID: uint32(os.Geteuid()), EGID: uint32(os.Getegid()),
		Environ:  os.Environ(),
		Cwd:      cwd,
		Terminal: isTerminal(os.Stdin) && isTerminal(os.Stdout),
		FS:       OSFS{},
		SELinux:  selinux.GetEnabled(),
		AppArmor: apparmor.Check("/").Enabled, // the one detection: module parameter and securityfs
	}
	if h.SELinux {
		// Reserve this run's MCS level; the process and mount labels go to
		// the spec. agentbox does not relabel the workspace (see README).
		p, m, err := label.InitLabels(nil)
		if err != nil {
			return policy.Host{}, fmt.Errorf("selinux labels: %w", err)
		}
		h.SELinuxLabels = [2]string{p, m}
	}
	if h.AppArmor {
		// Loading a profile needs root; an ordinary user can only use one
		// that an administrator has loaded.
		loaded, _ := apparmor.IsLoaded(policy.AppArmorProfile)
		h.AppArmorReady = h.EUID == 0 || loaded
	}
	h.Homes = readHomes("/etc/passwd")
	h.Home = userHome(h.EUID)
	h.CgroupV2 = CgroupV2("/sys/fs/cgroup")
	h.CanLimit, h.LimitReason = canLimit(h.EUID, h.CgroupV2)
	return h, nil
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// readHomes lists the home directories of the password database, plus
// /root, resolved through symlinks.
func readHomes(passwd string) []string {
	f, err := os.Open(passwd)
	if err != nil {
		return []string{"/root"}
	}
	defer f.Close()
	return ParseHomes(f)
}

// ParseHomes extracts the home directories of a passwd file, skipping
// system placeholders (/, /nonexistent, /bin, /dev and the like, which are
// not anyone's files), resolved through symlinks where they exist.
func ParseHomes(r io.Reader) []string {
	seen := map[string]bool{"/root": true}
	homes := []string{"/root"}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 7 || !isHome(f[5]) {
			continue
		}
		h := filepath.Clean(f[5])
		if real, err := filepath.EvalSymlinks(h); err == nil {
			h = real
		}
		if !seen[h] {
			seen[h] = true
			homes = append(homes, h)
		}
	}
	return homes
}

// isHome rejects the home fields of system accounts that point at shared
// system directories.
func isHome(h string) bool {
	if !filepath.IsAbs(h) || h == "/" || strings.HasPrefix(h, "/nonexistent") {
		return false
	}
	for _, sys := range []string{"/bin", "/sbin", "/usr", "/dev", "/proc", "/sys", "/var", "/run", "/etc", "/lib"} {
		if h == sys || strings.HasPrefix(h, sys+"/") {
			return false
		}
	}
	return true
}

// userHome is the invoking user's home: $HOME, else the password
// database's entry for uid.
func userHome(uid uint32) string {
	if h := os.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Clean(h)
	}
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return u.HomeDir
	}
	return ""
}

// CgroupV2 reports whether root is a unified (v2) cgroup hierarchy.
func CgroupV2(root string) bool {
	var st unix.Statfs_t
	return unix.Statfs(root, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// canLimit says whether this user can apply memory and pids limits: root
// always can; an ordinary user only on cgroup v2 with those controllers
// delegated to its own cgroup.
func canLimit(euid uint32, v2 bool) (bool, string) {
	if euid == 0 {
		return true, ""
	}
	if !v2 {
		return false, "cgroup v1 gives ordinary users no delegated controllers (boot with systemd.unified_cgroup_hierarchy=1, or run agentbox as root)"
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false, "cannot read /proc/self/cgroup"
	}
	path := strings.TrimPrefix(strings.TrimSpace(string(own)), "0::")
	dir := filepath.Join("/sys/fs/cgroup", filepath.Dir(path))
	ctrl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil || !bytes.Contains(ctrl, []byte("memory")) || !bytes.Contains(ctrl, []byte("pids")) {
		return false, "memory and pids controllers are not delegated to " + dir + " (enable systemd user delegation: https://rootlesscontaine.rs/getting-started/common/cgroup2/)"
	}
	if unix.Access(dir, unix.W_OK) != nil {
		return false, dir + " is not writable by this user"
	}
	return true, ""
}
