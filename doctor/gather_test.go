package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/host"
)

// doctor reports the facts it shares with `agentbox run` from host.Tree:
// on every fixture, what Gather says is what the planner's reader says.
func TestGatherAgreesWithHost(t *testing.T) {
	for _, tc := range hostCases {
		t.Run(tc.name, func(t *testing.T) {
			h, fx := loadFixture(t, tc.name)
			f := Gather(context.Background(), h)
			tree := host.Tree{Dir: fx.root, Writable: fx.Writable}
			if a := tree.Account(uint32(fx.UID), fx.Getenv); f.User.Name != a.Name || f.User.GID != a.GID || f.User.Home != a.Home {
				t.Errorf("user %+v, host.Tree says %+v", f.User, a)
			}
			cg := tree.Cgroup(uint32(fx.UID))
			if f.Cgroup.Mode != cg.Mode || f.Cgroup.CanLimit != cg.CanLimit || f.Cgroup.Reason != cg.Reason {
				t.Errorf("cgroup %+v, host.Tree says %+v", f.Cgroup, cg)
			}
			if f.LSM.AppArmor != tree.AppArmor() {
				t.Errorf("apparmor %+v, host.Tree says %+v", f.LSM.AppArmor, tree.AppArmor())
			}
		})
	}
}

// A delegated cgroup the user cannot write gives no limits: the rule is
// writability (what the runtime needs to create the sandbox's cgroup), as
// for `agentbox run`.
func TestGatherCgroupNotWritable(t *testing.T) {
	h, fx := loadFixture(t, "ubuntu-24.04-restricted-userns")
	dir := "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice"
	for name, st := range map[string]fixtureStat{
		"owned by root":        {Mode: "dir 0755", UID: 0},
		"owned, no write bit":  {Mode: "dir 0555", UID: 1000},
		"writable by everyone": {Mode: "dir 0777", UID: 0},
	} {
		fx.Stats = map[string]fixtureStat{dir: st}
		f := Gather(context.Background(), h)
		want := name == "writable by everyone"
		if f.Cgroup.CanLimit != want || !want && !strings.Contains(f.Cgroup.Reason, dir+" is not writable by this user") {
			t.Errorf("%s: %+v, want can_limit=%v", name, f.Cgroup, want)
		}
	}
}

// The docker group's members come from both databases, through the
// library: named members and those whose primary group it is; comment and
// NIS compat lines name nobody.
func TestGroupMembers(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"etc/group":  "#docker:x:998:mallory\nroot:x:0:\ndocker:x:998:ana,bob\n+docker:x:998:eve\n",
		"etc/passwd": "+::::::\nroot:x:0:0::/root:/bin/sh\ndeploy:x:1001:998::/home/deploy:/bin/sh\n#old:x:1002:998::/:/bin/sh\n+eve:x:1003:998::/:/bin/sh\nbob:x:1004:998::/home/bob:/bin/sh\n",
	})
	h := Host{Root: root, Sys: &fixtureHost{root: root}}
	if got, want := groupMembers(h, "docker"), []string{"ana", "bob", "deploy"}; !cmp.Equal(got, want) {
		t.Errorf("docker members %v, want %v", got, want)
	}
	if got := groupMembers(h, "nosuch"); got != nil {
		t.Errorf("unknown group has members %v", got)
	}
	for id, want := range map[uint32]string{0: "root", 1001: "deploy", 4242: "4242"} {
		if got := userName(h, id); got != want {
			t.Errorf("uid %d is %q, want %q", id, got, want)
		}
	}
	if got := groupName(h, 998); got != "docker" {
		t.Errorf("gid 998 is %q, want docker", got)
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
