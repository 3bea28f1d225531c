//go:build linux

package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestOwnCgroupFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"v2", "0::/user.slice/user-1000.slice/session-2.scope\n", []string{
			"/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/cgroup.procs",
			"/sys/fs/cgroup/unified/user.slice/user-1000.slice/session-2.scope/cgroup.procs",
		}},
		{"hybrid, the unified one first", "9:name=systemd:/x.scope\n8:pids:/\n3:cpu,cpuacct:/a\n0::/x.scope\n", []string{
			"/sys/fs/cgroup/x.scope/cgroup.procs",
			"/sys/fs/cgroup/unified/x.scope/cgroup.procs",
			"/sys/fs/cgroup/systemd/x.scope/cgroup.procs",
			"/sys/fs/cgroup/pids/cgroup.procs",
			"/sys/fs/cgroup/cpu,cpuacct/a/cgroup.procs",
		}},
		{"v1 only", "4:memory:/m\n", []string{"/sys/fs/cgroup/memory/m/cgroup.procs"}},
		{"malformed lines are skipped", "garbage\n1:pids\n2:pids:relative\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cgroup")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := ownCgroupFiles(path); !slices.Equal(got, tc.want) {
				t.Errorf("ownCgroupFiles:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	if got := ownCgroupFiles(filepath.Join(t.TempDir(), "missing")); got != nil {
		t.Errorf("a missing file: got %q, want nil", got)
	}
}
