package policy

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// The default runtime is a decision from the host's facts alone: crun
// where it is installed, can run for this user and has not failed its last
// self-test here; runc otherwise; the policy's runtime always wins.
func TestRuntimeChoice(t *testing.T) {
	crun := InstalledRuntime{Name: "crun", Path: "/usr/bin/crun"}
	runc := InstalledRuntime{Name: "runc", Path: "/usr/sbin/runc"}
	failed, passed := crun, crun
	failed.SelfTest, failed.Run = SelfTestFailed, "R1"
	passed.SelfTest, passed.Run = SelfTestPassed, "R2"
	for _, c := range []struct {
		name     string
		policy   string
		euid     uint32
		hybrid   bool
		runtimes []InstalledRuntime
		want     string
		chosen   string
		reason   string
	}{
		{"no crun", "", 0, false, []InstalledRuntime{runc}, "runc", ChosenDefault, "crun is not installed"},
		{"crun untested", "", 0, false, []InstalledRuntime{crun, runc}, "crun", ChosenDefault, "has run no self-test"},
		{"crun passed", "", 0, true, []InstalledRuntime{passed, runc}, "crun", ChosenDefault, "passed the self-test of run R2 on this host; it starts about three times faster than runc; the hybrid"},
		{"crun failed", "", 0, false, []InstalledRuntime{failed, runc}, "runc", ChosenDefault, "failed the self-test of run R1"},
		{"rootless hybrid", "", 1000, true, []InstalledRuntime{passed, runc}, "runc", ChosenDefault, "only root can hide"},
		{"rootless unified", "", 1000, false, []InstalledRuntime{crun, runc}, "crun", ChosenDefault, "crun at /usr/bin/crun"},
		{"root's closed workspace", "", 0, false, []InstalledRuntime{passed, runc}, "runc", ChosenDefault, "is root's and closed to others"},
		{"policy wins", "runc", 0, false, []InstalledRuntime{passed, runc}, "runc", ChosenPolicy, "asked for by the policy"},
		{"policy crun although failed", "crun", 0, false, []InstalledRuntime{failed, runc}, "crun", ChosenPolicy, "asked for by the policy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan, err := resolve(t, Policy{Runtime: c.policy}, []string{"sh"}, func(f *fakeFS, h *Host) {
				f.file("/usr/bin/crun", 0o755, 0)
				f.path["crun"] = "/usr/bin/crun"
				if c.name == "root's closed workspace" {
					f.files["/srv/proj"] = FileInfo{Mode: fs.ModeDir | 0o700}
				}
				h.EUID, h.HybridCgroup, h.Runtimes = c.euid, c.hybrid, c.runtimes
			})
			if err != nil {
				t.Fatal(err)
			}
			if rt := plan.Runtime; rt.Name != c.want || rt.Chosen != c.chosen || !strings.Contains(rt.Reason, c.reason) {
				t.Errorf("runtime %+v, want %s chosen by %s because …%s…", rt, c.want, c.chosen, c.reason)
			}
		})
	}
}

// crun asked for by name as an ordinary user on a hybrid cgroup host is
// refused at planning, as a host that cannot provide it (exit code 4),
// with the fix, rather than at the runtime's create.
func TestRootlessCrunOnHybridIsAHostError(t *testing.T) {
	_, err := resolve(t, Policy{Runtime: "crun"}, []string{"sh"}, func(f *fakeFS, h *Host) {
		f.file("/usr/bin/crun", 0o755, 0)
		f.path["crun"] = "/usr/bin/crun"
		h.EUID, h.HybridCgroup = 1000, true
	})
	var he *HostError
	if !errors.As(err, &he) || !strings.Contains(he.Fix, "--runtime runc") {
		t.Fatalf("err %v, want a HostError whose fix names --runtime runc", err)
	}
}
