package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func darwinHost(f *fakeFS) Host {
	h := userHost(f)
	h.OS = OSDarwin
	h.Account = &UserAccount{Name: "_agentbox", UID: 451, GID: 451, Home: "/Users/Shared/agentbox/home"}
	return h
}

// TestResolveUserDarwin is the whole plan for --isolation user on macOS,
// against testdata/user-plan-darwin.json (-update rewrites it): none of
// Linux's layers, its own residuals, and the probes it takes out of the
// self-test.
func TestResolveUserDarwin(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 1000, 1000)
	plan, err := Resolve(Policy{Isolation: IsolationUser}, []string{"sh", "-c", "id"}, darwinHost(f), userRun())
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "user-plan-darwin.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)+"\n"); d != "" {
		t.Errorf("plan (-golden +got):\n%s", d)
	}
	if plan.Landlock != nil || plan.Seccomp != "" || plan.CgroupsPath != "" || plan.Limits != nil {
		t.Errorf("landlock %+v, seccomp %q, cgroup %q, limits %+v: a darwin plan has none of Linux's layers", plan.Landlock, plan.Seccomp, plan.CgroupsPath, plan.Limits)
	}
	var codes []string
	for _, r := range plan.Residuals {
		codes = append(codes, r.Code)
		for _, word := range []string{"nftables", "Landlock", "cgroup.kill", "agentbox-init", "seccomp filter on"} {
			if strings.Contains(r.Reason, word) {
				t.Errorf("residual %s speaks of Linux's %s: %s", r.Code, word, r.Reason)
			}
		}
		if r.Code == ResidualUserShared {
			t.Errorf("a darwin plan carries Linux's residual %s", r.Code)
		}
	}
	for _, c := range []string{ResidualDarwinShared, ResidualDarwinSyscalls, ResidualDarwinNoSeccomp, ResidualDarwinNoProcfs, ResidualDarwinFence, ResidualDarwinDNS, "no-resource-limits", "user-no-terminal"} {
		if !slices.Contains(codes, c) {
			t.Errorf("residual %s missing from %v", c, codes)
		}
	}
	if n := len(plan.Unprobed()); n != len(DarwinSharedUnprobed)+len(DarwinSyscallUnprobed)+len(DarwinNoSeccompUnprobed)+len(DarwinProcfsUnprobed) {
		t.Errorf("the plan takes %d probes out, want every list's", n)
	}
}

// A probe is in one darwin list at most: ALLOW under a residual, not run,
// or darwin's own; and each probe a darwin reason names as a layer's check
// is one that runs there.
func TestDarwinProbeListsDisjoint(t *testing.T) {
	seen := map[string]string{}
	for name, l := range map[string][]string{
		"shared": DarwinSharedProbes, "shared-unprobed": DarwinSharedUnprobed, "syscalls": DarwinSyscallUnprobed,
		"no-seccomp": DarwinNoSeccompUnprobed, "procfs": DarwinProcfsUnprobed, "darwin": DarwinProbes,
	} {
		for _, p := range l {
			if other, ok := seen[p]; ok {
				t.Errorf("probe %s is in %s and %s", p, other, name)
			}
			seen[p] = name
		}
	}
	f := newFakeFS()
	f.dir("/srv/proj", 1000, 1000)
	plan, err := Resolve(Policy{Isolation: IsolationUser}, []string{"sh"}, darwinHost(f), userRun())
	if err != nil {
		t.Fatal(err)
	}
	unprobed := plan.Unprobed()
	for _, check := range append(slices.Clone(DarwinProbes), "kill-pid1-denied", "raw-socket-denied", "mknod-block-denied", "chroot-denied", "internet-unreachable", "dns-unresolvable", "workspace-socket-unreachable") {
		if slices.Contains(unprobed, check) {
			t.Errorf("%s stands in for a layer, yet the plan does not run it", check)
		}
	}
}

// A Linux user plan takes no probe out of its self-test and keeps its
// layers: the darwin branch is darwin's only.
func TestResolveUserLinuxRunsEveryProbe(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 1000, 1000)
	plan, err := Resolve(Policy{Isolation: IsolationUser}, []string{"sh"}, userHost(f), userRun())
	if err != nil {
		t.Fatal(err)
	}
	if u := plan.Unprobed(); u != nil || plan.Landlock == nil || plan.Seccomp == "" {
		t.Errorf("unprobed %v, landlock %v, seccomp %q", u, plan.Landlock != nil, plan.Seccomp)
	}
}

// Each probe a darwin residual takes out is named in its reason, which is
// what the run's record keeps.
func TestDarwinReasonsNameTheirProbes(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 1000, 1000)
	plan, err := Resolve(Policy{Isolation: IsolationUser}, []string{"sh"}, darwinHost(f), userRun())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range plan.Residuals {
		for _, p := range append(slices.Clone(r.Unprobed), r.Probes...) {
			if !strings.Contains(r.Reason, p) {
				t.Errorf("residual %s takes out or excuses %s without naming it", r.Code, p)
			}
		}
	}
}
