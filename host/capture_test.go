package host

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/apparmor"
)

// The review's misplan: the module parameter said Y but securityfs was not
// mounted, host facts said AppArmor, and run failed loading the profile
// while doctor reported Landlock. Detection is apparmor.Check's, for both.
func TestAppArmorIsApparmorCheck(t *testing.T) {
	for name, want := range map[string]bool{"enabled": true, "disabled": false, "no-securityfs": false} {
		dir := "../apparmor/testdata/hosts/" + name
		st := Tree{Dir: dir}.AppArmor()
		if st.Enabled != want || st != apparmor.Check(dir) {
			t.Errorf("%s: %+v, want enabled=%v and apparmor.Check's answer", name, st, want)
		}
	}
}

// Capture's facts are the Tree's and Homes', not a second reading.
func TestCaptureUsesTheSharedReaders(t *testing.T) {
	h, err := Capture(os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	live := Live()
	if want := live.Account(h.EUID, os.Getenv).Home; h.Home != want {
		t.Errorf("Home %q, want Tree.Account's %q", h.Home, want)
	}
	if d := cmp.Diff(Homes("/etc/passwd", h.Home), h.Homes); d != "" {
		t.Errorf("Homes differ from host.Homes (-want +got):\n%s", d)
	}
	cg := live.Cgroup(h.EUID)
	if h.CgroupV2 != (cg.Mode == CgroupV2) || h.CanLimit != cg.CanLimit {
		t.Errorf("cgroup v2=%v can_limit=%v, want Tree.Cgroup's %+v", h.CgroupV2, h.CanLimit, cg)
	}
	if h.AppArmor != apparmor.Check("/").Enabled {
		t.Errorf("AppArmor %v, want apparmor.Check's", h.AppArmor)
	}
}

// Capture reads the environment it is given, not the process's: HOME and
// the variables the plan may pass come from environ.
func TestCaptureReadsTheGivenEnvironment(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "AGENTBOX_CAPTURE_PROBE=1", "HOME=/second"}
	h, err := Capture(env)
	if err != nil {
		t.Fatal(err)
	}
	if h.Home != home {
		t.Errorf("Home %q, want the given environment's first HOME %q", h.Home, home)
	}
	if d := cmp.Diff(env, h.Environ); d != "" {
		t.Errorf("Environ differs from the given one (-want +got):\n%s", d)
	}
	if _, ok := os.LookupEnv("AGENTBOX_CAPTURE_PROBE"); ok {
		t.Fatal("the test's variable leaked into the process environment")
	}
	env[1] = "CHANGED=1"
	if h.Environ[1] != "AGENTBOX_CAPTURE_PROBE=1" {
		t.Error("Capture kept the caller's slice, not a copy")
	}
}
