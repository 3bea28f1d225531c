package doctor

import (
	"strings"
	"testing"
)

// TestRunRoot injects statfs answers and checks what the run-root check
// makes of them: a tmpfs passes, a disk warns with the fix for who runs.
func TestRunRoot(t *testing.T) {
	const ext4, xfs = 0xEF53, 0x58465342
	cases := []struct {
		name    string
		euid    int
		env     map[string]string
		root    string
		fs      map[string]int64
		status  Status
		detail  string
		fix     string
		noFixOf string
	}{
		{name: "root on tmpfs", root: "/run/agentbox", fs: map[string]int64{"/run/agentbox": fsTmpfs}, status: Pass, detail: "/run/agentbox is on tmpfs"},
		{name: "root on ramfs", root: "/run/agentbox", fs: map[string]int64{"/run/agentbox": fsRamfs}, status: Pass, detail: "on ramfs"},
		{name: "missing, parent tmpfs", root: "/run/agentbox", fs: map[string]int64{"/run": fsTmpfs}, status: Pass, detail: "agentbox creates it in /run, on tmpfs"},
		{
			name: "root on ext4", root: "/run/agentbox", fs: map[string]int64{"/run/agentbox": ext4}, status: Warn, detail: "/run/agentbox is on ext2/3/4, not a tmpfs",
			fix: "mkdir -p /run/agentbox && mount -t tmpfs -o mode=0711,nosuid,nodev tmpfs /run/agentbox",
		},
		{
			name: "root, missing under a disk", root: "/run/agentbox", fs: map[string]int64{"/": ext4}, status: Warn, detail: "agentbox creates it in /, on ext2/3/4",
			fix: "tmpfs /run/agentbox tmpfs mode=0711,nosuid,nodev 0 0",
		},
		{
			name: "AGENTBOX_RUN_ROOT on xfs", root: "/srv/ab", env: map[string]string{"AGENTBOX_RUN_ROOT": "/srv/ab"}, fs: map[string]int64{"/srv/ab": xfs},
			status: Warn, detail: "/srv/ab is on xfs", fix: "mount -t tmpfs -o mode=0711,nosuid,nodev tmpfs /srv/ab",
		},
		{name: "unnamed filesystem", root: "/run/agentbox", fs: map[string]int64{"/run/agentbox": 0x1234}, status: Warn, detail: "filesystem type 0x1234"},
		{
			name: "rootless XDG on disk", euid: 1000, env: map[string]string{"XDG_RUNTIME_DIR": "/home/u/rt"}, root: "/home/u/rt/agentbox", fs: map[string]int64{"/home/u/rt": ext4},
			status: Warn, detail: "agentbox creates it in /home/u/rt", fix: "XDG_RUNTIME_DIR is not a tmpfs", noFixOf: "mount -t",
		},
		{
			name: "rootless /tmp on disk", euid: 1000, root: "/tmp/agentbox-1000", fs: map[string]int64{"/tmp/agentbox-1000": ext4},
			status: Warn, fix: "set XDG_RUNTIME_DIR", noFixOf: "mount -t",
		},
		{name: "rootless XDG tmpfs", euid: 1000, env: map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, root: "/run/user/1000/agentbox", fs: map[string]int64{"/run/user/1000": fsTmpfs}, status: Pass},
		{name: "statfs fails", root: "/run/agentbox", fs: map[string]int64{}, status: Unknown, detail: "cannot statfs the run root /run/agentbox", fix: "stat -f /run/agentbox"},
		{name: "no run root named", status: Unknown, detail: "not determined"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := &fixtureHost{UID: tc.euid, Env: tc.env, FSTypes: tc.fs}
			f := &Facts{RunRoot: gatherRunRoot(Host{Root: t.TempDir(), Sys: fx}, tc.root)}
			rs := checkRunRoot(f)
			if len(rs) != 1 {
				t.Fatalf("%d results, want 1", len(rs))
			}
			r := rs[0]
			if r.ID != "run-root" || r.Status != tc.status || r.Layer != "" || r.Blocks() {
				t.Fatalf("%s %s layer %q blocks %v (%s); want run-root %s, no layer, never blocking", r.ID, r.Status, r.Layer, r.Blocks(), r.Detail, tc.status)
			}
			if !strings.Contains(r.Detail, tc.detail) {
				t.Errorf("detail %q lacks %q", r.Detail, tc.detail)
			}
			if r.Status == Pass && r.Fix != "" {
				t.Errorf("PASS with a fix %q", r.Fix)
			}
			if r.Status != Pass && r.Fix == "" {
				t.Errorf("%s without a fix", r.Status)
			}
			if !strings.Contains(r.Fix, tc.fix) {
				t.Errorf("fix %q lacks %q", r.Fix, tc.fix)
			}
			if tc.noFixOf != "" && strings.Contains(r.Fix, tc.noFixOf) {
				t.Errorf("fix %q has %q, which a rootless user cannot run", r.Fix, tc.noFixOf)
			}
		})
	}
}

// TestRunRootWarnNeverBlocks: a run root on a disk is slower, not unsafe;
// its WARN is no residual and leaves the verdict alone.
func TestRunRootWarnNeverBlocks(t *testing.T) {
	fx := &fixtureHost{FSTypes: map[string]int64{"/run/agentbox": 0xEF53}}
	f := &Facts{RunRoot: gatherRunRoot(Host{Root: t.TempDir(), Sys: fx}, "/run/agentbox")}
	rep := Evaluate(f)
	for _, res := range rep.Residuals {
		if res.Code == "run-root" {
			t.Errorf("run-root is a residual: %+v", res)
		}
	}
	for _, b := range rep.Verdict.Blocking {
		if strings.Contains(b, "run-root") {
			t.Errorf("run-root blocks: %v", rep.Verdict.Blocking)
		}
	}
}
