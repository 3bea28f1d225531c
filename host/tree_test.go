//go:build linux

package host

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

func TestAccount(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "etc/passwd"), `+::::::
#ana:x:1000:7:old:/home/old:/bin/sh
root:x:0:0:root:/root:/bin/bash
ana:x:1000:1001:Ana:/home/ana:/bin/zsh
again:x:1000:5::/home/again:/bin/sh
broken
`)
	tree := Tree{Dir: dir}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		uid  uint32
		env  map[string]string
		want Account
	}{
		{"first entry wins, comments and compat lines skipped", 1000, nil, Account{"ana", 1001, "/home/ana"}},
		{"root is not the compat line", 0, nil, Account{"root", 0, "/root"}},
		{"HOME wins when absolute", 1000, map[string]string{"HOME": "/srv/ana/"}, Account{"ana", 1001, "/srv/ana"}},
		{"relative HOME ignored", 1000, map[string]string{"HOME": "ana"}, Account{"ana", 1001, "/home/ana"}},
		{"no entry", 4242, map[string]string{"HOME": "/home/x"}, Account{Home: "/home/x"}},
	} {
		if got := tree.Account(tc.uid, env(tc.env)); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := (Tree{Dir: t.TempDir()}).Account(0, env(nil)); got != (Account{}) {
		t.Errorf("no passwd file: %+v", got)
	}
}

func TestCgroupMode(t *testing.T) {
	for name, tc := range map[string]struct {
		mountinfo, want string
	}{
		"unified": {"33 25 0:29 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", CgroupV2},
		"hybrid": {"28 23 0:24 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n" +
			"29 28 0:25 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n" +
			"31 28 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", CgroupHybrid},
		"legacy": {"31 28 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", CgroupV1},
		"none":   {"24 1 259:2 / / rw - ext4 /dev/vda rw\n", ""},
		// statfs(2), runc and crun see the top mount: not unified.
		"cgroup2 covered": {"33 25 0:29 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n" +
			"40 33 0:50 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", ""},
		"cgroup2 only elsewhere": {"29 28 0:25 / /mnt/cg rw - cgroup2 cgroup2 rw\n", ""},
	} {
		ms, err := mountinfo.GetMountsFromReader(strings.NewReader(tc.mountinfo), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := cgroupMode(ms); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// On this machine the mount table and statfs(2) agree on the hierarchy.
func TestCgroupModeMatchesStatfs(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs(CgroupRoot, &st); err != nil {
		t.Skipf("statfs %s: %v", CgroupRoot, err)
	}
	cg := Live().Cgroup(0)
	if cg.Err != "" {
		t.Fatal(cg.Err)
	}
	if unified := st.Type == unix.CGROUP2_SUPER_MAGIC; unified != (cg.Mode == CgroupV2) {
		t.Errorf("mode %q, but statfs says unified=%v", cg.Mode, unified)
	}
}

const (
	unifiedMounts = "33 25 0:29 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
	legacyMounts  = "31 28 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	userCgroup    = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice"
)

func TestCgroupCanLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		euid     uint32
		files    map[string]string
		writable bool
		ok       bool
		reason   string // a piece of Reason
		fix      string // a piece of Fix
	}{
		{name: "root", euid: 0, files: map[string]string{"proc/self/mountinfo": legacyMounts}, ok: true},
		{
			name: "rootless on v1", euid: 1000, files: map[string]string{"proc/self/mountinfo": legacyMounts},
			reason: "cgroup v1 gives ordinary users no delegated controllers", fix: "systemd.unified_cgroup_hierarchy=1",
		},
		{
			name: "rootless, nothing mounted", euid: 1000, files: map[string]string{"proc/self/mountinfo": "24 1 259:2 / / rw - ext4 /dev/vda rw\n"},
			reason: "cgroup (not mounted)",
		},
		{
			name: "no own cgroup", euid: 1000, files: map[string]string{"proc/self/mountinfo": unifiedMounts},
			reason: "cannot read /proc/self/cgroup",
		},
		{
			name: "not delegated", euid: 1000, writable: true,
			files: map[string]string{
				"proc/self/mountinfo": unifiedMounts, "proc/self/cgroup": "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-bash.scope\n",
				userCgroup[1:] + "/cgroup.subtree_control": "cpu io memory\n",
			},
			reason: "memory and pids controllers are not delegated to " + userCgroup, fix: "rootlesscontaine.rs",
		},
		{
			name: "a controller name inside another is not the controller", euid: 1000, writable: true,
			files: map[string]string{
				"proc/self/mountinfo": unifiedMounts, "proc/self/cgroup": "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-bash.scope\n",
				userCgroup[1:] + "/cgroup.subtree_control": "memoryx pids\n",
			},
			reason: "not delegated",
		},
		{
			name: "delegated but not writable", euid: 1000,
			files: map[string]string{
				"proc/self/mountinfo": unifiedMounts, "proc/self/cgroup": "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-bash.scope\n",
				userCgroup[1:] + "/cgroup.subtree_control": "cpu memory pids\n",
			},
			reason: userCgroup + " is not writable by this user",
		},
		{
			name: "delegated and writable", euid: 1000, writable: true, ok: true,
			files: map[string]string{
				"proc/self/mountinfo": unifiedMounts,
				// v1 lines before the unified one, as on a hybrid host's leftovers
				"proc/self/cgroup":                         "1:name=systemd:/x\n0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-bash.scope\n",
				userCgroup[1:] + "/cgroup.subtree_control": "cpu memory pids\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, text := range tc.files {
				write(t, filepath.Join(dir, p), text)
			}
			var asked string
			tree := Tree{Dir: dir, Writable: func(d string) bool { asked = d; return tc.writable }}
			cg := tree.Cgroup(tc.euid)
			if cg.CanLimit != tc.ok || !strings.Contains(cg.Reason, tc.reason) || !strings.Contains(cg.Fix, tc.fix) {
				t.Errorf("%+v, want can_limit=%v, reason with %q, fix with %q", cg, tc.ok, tc.reason, tc.fix)
			}
			if tc.ok && tc.euid != 0 && asked != userCgroup {
				t.Errorf("asked whether %q is writable, want %s", asked, userCgroup)
			}
		})
	}
}

func TestCgroupUnreadableMountTable(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "proc/self/mountinfo"), "not a mountinfo line\n")
	cg := Tree{Dir: dir}.Cgroup(0)
	if cg.Mode != "" || !strings.Contains(cg.Err, "/proc/self/mountinfo") {
		t.Errorf("%+v, want no mode and an error naming /proc/self/mountinfo", cg)
	}
	if cg := (Tree{Dir: t.TempDir()}).Cgroup(0); cg.Err == "" {
		t.Errorf("no mount table: %+v, want an error", cg)
	}
}

func TestIsAccount(t *testing.T) {
	for name, want := range map[string]bool{"ana": true, "a-b": true, "_apt": true, "": false, "#ana": false, "+": false, "+@admins": false, "-bob": false} {
		if got := IsAccount(name); got != want {
			t.Errorf("IsAccount(%q) = %v, want %v", name, got, want)
		}
	}
}
