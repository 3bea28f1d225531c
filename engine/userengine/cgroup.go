//go:build linux

package userengine

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/policy"
)

// cgroupRoot is where cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// Unified is the mount of the unified (v2) hierarchy: cgroupRoot on a v2
// host, cgroupRoot/unified on a hybrid one; ErrNoUnified without either.
func Unified() (string, error) {
	for _, dir := range []string{cgroupRoot, filepath.Join(cgroupRoot, "unified")} {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return dir, nil
		}
	}
	return "", ErrNoUnified
}

// ErrNoUnified says that the host mounts no cgroup v2 hierarchy.
var ErrNoUnified = errors.New("no cgroup v2 (unified) hierarchy is mounted at /sys/fs/cgroup or /sys/fs/cgroup/unified: --isolation user needs one to hold the run's processes and kill them all (boot with systemd.unified_cgroup_hierarchy=1, or mount -t cgroup2 none /sys/fs/cgroup/unified)")

// cgroup is the run's cgroup: its directory on the unified hierarchy, and
// those on the v1 hierarchies that carry its limits on a hybrid host.
type cgroup struct {
	dir string
	v1  []string
}

// makeCgroup creates path (/agentbox/RUN) on the unified hierarchy and
// applies limits where the host can: on the unified one when it has the
// controllers, else on the v1 memory, pids and cpu hierarchies.
func makeCgroup(path string, limits *policy.ResolvedLimits) (*cgroup, error) {
	root, err := Unified()
	if err != nil {
		return nil, err
	}
	cg := &cgroup{dir: filepath.Join(root, path)}
	if err := os.MkdirAll(cg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if limits == nil {
		return cg, nil
	}
	if root == cgroupRoot {
		return cg, cg.limitV2(root, path, limits)
	}
	return cg, cg.limitV1(path, limits)
}

func (cg *cgroup) limitV2(root, path string, l *policy.ResolvedLimits) error {
	// Each ancestor hands the controllers down to its children.
	parts := strings.Split(strings.Trim(path, "/"), "/")
	dir := root
	for _, p := range parts {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0o644); err != nil {
			return fmt.Errorf("cgroup: enable memory, pids and cpu below %s: %w", dir, err)
		}
		dir = filepath.Join(dir, p)
	}
	return writeAll(cg.dir, map[string]string{
		"memory.max": strconv.FormatInt(l.MemoryBytes, 10), "memory.swap.max": "0",
		"pids.max": strconv.FormatInt(l.Pids, 10), "cpu.weight": strconv.FormatUint(l.CPUWeight, 10),
	})
}

func (cg *cgroup) limitV1(path string, l *policy.ResolvedLimits) error {
	// cpu.shares is cpu.weight scaled as runc does it (1..10000 → 2..262144).
	shares := 2 + ((l.CPUWeight-1)*262142)/9999
	for ctrl, files := range map[string]map[string]string{
		"memory": {"memory.limit_in_bytes": strconv.FormatInt(l.MemoryBytes, 10)},
		"pids":   {"pids.max": strconv.FormatInt(l.Pids, 10)},
		"cpu":    {"cpu.shares": strconv.FormatUint(shares, 10)},
	} {
		dir := filepath.Join(cgroupRoot, ctrl, path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", ctrl, err)
		}
		cg.v1 = append(cg.v1, dir)
		if err := writeAll(dir, files); err != nil {
			return err
		}
	}
	return nil
}

func writeAll(dir string, files map[string]string) error {
	for name, v := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			return fmt.Errorf("cgroup: %s=%s: %w", filepath.Join(dir, name), v, err)
		}
	}
	return nil
}

// join moves pid into the v1 hierarchies (the unified one it was cloned
// into); init does so before it starts anything, so every child follows.
func (cg *cgroup) join(pid int) error {
	for _, dir := range cg.v1 {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("cgroup: move %d into %s: %w", pid, dir, err)
		}
	}
	return nil
}

// procs lists the pids of the cgroup dir (none when it is gone).
func procs(dir string) []int {
	f, err := os.Open(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// killCgroup kills every process of dir: cgroup.kill (Linux 5.14), else
// SIGKILL to each listed pid.
func killCgroup(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0o644); err == nil || errors.Is(err, fs.ErrNotExist) && len(procs(dir)) == 0 {
		return
	}
	for _, pid := range procs(dir) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// accountPids are the live processes whose real, effective or saved uid
// is uid.
func accountPids(uid uint32) []int {
	return engine.LivePids(func(pid int) bool {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		return err == nil && hasUID(string(b), uid)
	})
}

// hasUID reads the Uid: line of /proc/PID/status.
func hasUID(status string, uid uint32) bool {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			for _, f := range strings.Fields(rest)[:min(3, len(strings.Fields(rest)))] {
				if f == strconv.FormatUint(uint64(uid), 10) {
					return true
				}
			}
		}
	}
	return false
}
