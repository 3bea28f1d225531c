package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// healthyFacts is a root host on which every layer holds.
func healthyFacts() *Facts {
	return &Facts{
		User:   UserFacts{EUID: 0, Name: "root", Home: "/root"},
		OS:     OSRelease{ID: "debian", VersionID: "13", Pretty: "Debian GNU/Linux 13 (trixie)"},
		Kernel: "6.12.48-amd64",
		UserNS: UserNSFacts{Max: Sysctl{true, "63000"}, CreateRan: true},
		IDs:    IDFacts{Source: userns.SourceBuiltin, NewIDMap: true, FreeStart: 100000},
		Seccomp: SeccompFacts{
			Mode: "0", ActionsRead: true,
			Actions: []string{"kill_process", "kill_thread", "trap", "errno", "user_notif", "trace", "log", "allow"},
		},
		LSM: LSMFacts{
			Known: true, Active: []string{"lockdown", "capability", "landlock", "yama", "apparmor"},
			AppArmor: apparmor.Status{Enabled: true}, Parser: "/usr/sbin/apparmor_parser", LandlockABI: 6,
		},
		Cgroup:   CgroupFacts{Mode: "v2", CanLimit: true},
		Runtimes: []RuntimeFacts{{Name: "runc", Path: "/usr/sbin/runc", Version: "1.3.6"}},
		SelfTest: SelfTestFacts{Ran: true, Result: SelfTestResult{RunID: "r1", Probes: []ledger.Probe{
			{Probe: "host-home-not-mounted", Expect: "DENY", Decision: "DENY"},
			{Probe: "gateway-reachable", Expect: "ALLOW", Decision: "ALLOW"},
		}}},
	}
}

// rootless turns healthyFacts into an ordinary user's host.
func rootless(f *Facts) {
	f.User = UserFacts{EUID: 1000, Name: "ana", GID: 1000, Home: "/home/ana"}
	f.IDs = IDFacts{
		Mode: policy.IDSubIDs, NewIDMap: true, FreeStart: 165536,
		SubUIDs: []userns.SubIDEntry{{Owner: "ana", Start: 100000, Count: 65536}},
	}
}

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		change   func(f *Facts)
		id       string
		status   Status
		residual string // expected residual code of a WARN ("" for none)
		fix      string // a piece of the fix line
	}{
		{"healthy host passes", func(*Facts) {}, "mac", Pass, "", ""},
		{"old kernel warns", func(f *Facts) { f.Kernel = "5.10.0-30-amd64" }, "kernel", Warn, "", "5.13 or later"},
		{"unreadable kernel", func(f *Facts) { f.Kernel = "" }, "kernel", Unknown, "", "uname -r"},
		{"no user namespaces", func(f *Facts) { f.UserNS.Max = Sysctl{} }, "userns-max", Fail, "", "CONFIG_USER_NS"},
		{"max user namespaces 0", func(f *Facts) { f.UserNS.Max.Value = "0" }, "userns-max", Fail, "", "sysctl -w user.max_user_namespaces=15000"},
		{"Debian switch off, root", func(f *Facts) { f.UserNS.UnprivClone = Sysctl{true, "0"} }, "userns-unprivileged-clone", Pass, "", ""},
		{"Debian switch off, rootless", func(f *Facts) { rootless(f); f.UserNS.UnprivClone = Sysctl{true, "0"} }, "userns-unprivileged-clone", Fail, "", "kernel.unprivileged_userns_clone=1"},
		{"restriction with agentbox's profile", func(f *Facts) {
			rootless(f)
			f.UserNS.AppArmorRestrict = Sysctl{true, "1"}
			f.LSM.Profiles = []string{"agentbox-userns-runc"}
		}, "userns-apparmor-restrict", Pass, "", ""},
		{"restriction with a distribution profile", func(f *Facts) {
			rootless(f)
			f.UserNS.AppArmorRestrict = Sysctl{true, "1"}
			f.LSM.Profiles = []string{"runc"}
		}, "userns-apparmor-restrict", Warn, "userns-apparmor-restrict", "apparmor_parser -r /etc/apparmor.d/agentbox-userns-runc"},
		{"userns probe not run", func(f *Facts) { f.UserNS.CreateRan, f.UserNS.CreateErr = false, "no true" }, "userns-create", Unknown, "", "apt-get install coreutils"},
		{"userns refused on a host", func(f *Facts) { f.UserNS.CreateErr = "operation not permitted" }, "userns-create", Fail, "", "unshare --user true"},
		{"rootless without subids", func(f *Facts) {
			rootless(f)
			f.IDs.Mode, f.IDs.Reason, f.IDs.SubUIDs = policy.IDSingle, "ana has no /etc/subuid entry", nil
		}, "subids", Warn, "rootless-single-id", "usermod --add-subuids 165536-231071 --add-subgids 165536-231071 ana"},
		{"rootless without newuidmap", func(f *Facts) {
			rootless(f)
			f.IDs.Mode, f.IDs.NewIDMap, f.IDs.SubGIDs = policy.IDSingle, false, f.IDs.SubUIDs
		}, "subids", Warn, "rootless-single-id", "apt-get install uidmap"},
		{"incomplete dedicated range", func(f *Facts) { f.IDs.SlotsErr = "dedicated id range is incomplete" }, "subids", Fail, "", "usermod --add-subuids 100000-165535"},
		{"dedicated range", func(f *Facts) { f.IDs.Source = userns.SourceDedicated }, "subids", Pass, "", ""},
		{"no seccomp", func(f *Facts) { f.Seccomp.Mode = "" }, "seccomp", Fail, "", "CONFIG_SECCOMP_FILTER"},
		{"no actions_avail", func(f *Facts) { f.Seccomp.ActionsRead, f.Seccomp.Actions = false, nil }, "seccomp", Unknown, "", "kernel"},
		{"no errno action", func(f *Facts) { f.Seccomp.Actions = []string{"kill_process", "allow"} }, "seccomp", Fail, "", "kernel"},
		{"no log or user_notif", func(f *Facts) { f.Seccomp.Actions = []string{"kill_process", "errno", "allow"} }, "seccomp-actions", Warn, "", "kernel"},
		{"SELinux permissive", func(f *Facts) { f.LSM.SELinux = "permissive" }, "mac", Warn, "selinux-permissive", "setenforce 1"},
		{"SELinux enforcing", func(f *Facts) { f.LSM.SELinux = "enforcing" }, "mac", Pass, "", ""},
		{"AppArmor without parser", func(f *Facts) { f.LSM.Parser = "" }, "mac", Fail, "", "apt-get install apparmor"},
		{"AppArmor without parser, profile loaded", func(f *Facts) { f.LSM.Parser, f.LSM.Profiles = "", []string{"agentbox-default"} }, "mac", Pass, "", ""},
		{"Landlock instead", func(f *Facts) { f.LSM.AppArmor = apparmor.Status{Reason: "no module"} }, "mac", Warn, "lsm-unavailable", ""},
		{"no MAC at all", func(f *Facts) {
			f.LSM.AppArmor, f.LSM.LandlockABI = apparmor.Status{Reason: "no module"}, 0
		}, "mac", Warn, "lsm-unavailable", "lsm=landlock,lockdown,capability,yama,apparmor"},
		{"Landlock off on a new kernel", func(f *Facts) { f.LSM.LandlockABI = 0; f.LSM.AppArmor = apparmor.Status{} }, "landlock", Warn, "", "update-grub"},
		{"Landlock off beside AppArmor", func(f *Facts) { f.LSM.LandlockABI = 0 }, "landlock", Pass, "", ""},
		{"rootless on cgroup v1", func(f *Facts) {
			rootless(f)
			f.Cgroup = CgroupFacts{Mode: "hybrid", Reason: "cgroup hybrid gives ordinary users no delegated controllers"}
		}, "cgroup", Warn, "no-resource-limits", "systemd.unified_cgroup_hierarchy=1"},
		{"rootless without delegation", func(f *Facts) {
			rootless(f)
			f.Cgroup = CgroupFacts{Mode: "v2", Reason: "memory and pids controllers are not delegated"}
		}, "cgroup", Warn, "no-resource-limits", "Delegate=cpu cpuset io memory pids"},
		{"no cgroups", func(f *Facts) { f.Cgroup = CgroupFacts{} }, "cgroup", Unknown, "", "mount -t cgroup2"},
		{"no mount table", func(f *Facts) { f.Cgroup = CgroupFacts{Err: "read mount table: no such file"} }, "cgroup", Unknown, "", "mount -t proc"},
		{"no runtime", func(f *Facts) { f.Runtimes = nil }, "runtime-default", Fail, "", "apt-get install runc"},
		{"runsc that run refuses", func(f *Facts) {
			f.Runtimes = append(f.Runtimes, RuntimeFacts{Name: "runsc", Path: "/usr/bin/runsc", Version: "0.0", Refusal: "runsc 0.0 at /usr/bin/runsc cannot run an agentbox sandbox"})
		}, "runtime-runsc", Warn, "", "pass-fd"},
		{"runsc that run accepts", func(f *Facts) {
			f.Runtimes = append(f.Runtimes, RuntimeFacts{Name: "runsc", Path: "/usr/local/bin/runsc", Version: "v0.0.0-20260905035102-160fafc42237"})
		}, "runtime-runsc", Pass, "", ""},
		{"self-test not wired", func(f *Facts) { f.SelfTest = SelfTestFacts{NotRun: "not wired"} }, "selftest", Unknown, "", "agentbox selftest"},
		{"self-test sandbox failed", func(f *Facts) { f.SelfTest.Err = "runc create: permission denied" }, "selftest", Fail, "", "agentbox selftest"},
		{"self-test probe failed", func(f *Facts) {
			f.SelfTest.Result.Probes[0].Decision = "ALLOW"
		}, "selftest", Fail, "", "agentbox show r1"},
		{"self-test probe unknown", func(f *Facts) {
			f.SelfTest.Result.Probes[1].Decision = "UNKNOWN"
		}, "selftest", Fail, "", "agentbox show r1"},
		{"self-test without probes", func(f *Facts) { f.SelfTest.Result.Probes = nil }, "selftest", Unknown, "", "agentbox selftest"},
		{"container marker only", func(f *Facts) { f.Container.Markers = []string{"/.dockerenv exists"} }, "container", Unknown, "", "systemd-detect-virt --container"},
		{"world-writable docker socket", func(f *Facts) {
			f.Docker = DockerFacts{
				Installed: true, Socket: "/var/run/docker.sock", SocketFound: true, SocketMode: "0666", SocketOwner: "root", SocketGroup: "docker",
				ConfigFound: true, Config: DaemonConfig{UsernsRemap: "default", NoNewPrivileges: true, LiveRestore: true},
			}
		}, "docker-socket", Warn, "", "chmod 660 /var/run/docker.sock"},
		{"unreadable daemon.json", func(f *Facts) {
			f.Docker = DockerFacts{Installed: true, ConfigFound: true, ConfigErr: "invalid character"}
		}, "docker-config", Unknown, "", "json.tool"},
		{"rootless podman without subids", func(f *Facts) {
			rootless(f)
			f.IDs.Mode, f.IDs.Reason, f.IDs.SubUIDs = policy.IDSingle, "no entry", nil
			f.Podman = PodmanFacts{Path: "/usr/bin/podman", Version: "4.3.1"}
		}, "podman", Warn, "", "usermod --add-subuids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := healthyFacts()
			tc.change(f)
			rep := Evaluate(f)
			r, ok := find(rep.Checks, tc.id)
			if !ok {
				t.Fatalf("%s not reported", tc.id)
			}
			if r.Status != tc.status {
				t.Fatalf("%s: %s (%s), want %s", tc.id, r.Status, r.Detail, tc.status)
			}
			if !strings.Contains(r.Fix, tc.fix) || tc.status == Pass && r.Fix != "" {
				t.Errorf("%s: fix %q, want one containing %q", tc.id, r.Fix, tc.fix)
			}
			if got := residualOf(rep, r); got != tc.residual {
				t.Errorf("%s: residual %q, want %q", tc.id, got, tc.residual)
			}
			if r.Blocks() != (rep.Verdict.Status == VerdictCannot && contains(rep.Verdict.Blocking, r.ID)) {
				t.Errorf("%s: Blocks()=%v but verdict %s lists %v", tc.id, r.Blocks(), rep.Verdict.Status, rep.Verdict.Blocking)
			}
		})
	}
}

func find(rs []Result, id string) (Result, bool) {
	for _, r := range rs {
		if r.ID == id {
			return r, true
		}
	}
	return Result{}, false
}

// residualOf is the code under which r appears in the report's residuals.
func residualOf(rep Report, r Result) string {
	for _, res := range rep.Residuals {
		if res.Code == r.residualCode() && res.Detail == r.Detail {
			return res.Code
		}
	}
	return ""
}

func TestHealthyHostIsOK(t *testing.T) {
	rep := Evaluate(healthyFacts())
	if rep.Verdict.Status != VerdictOK || rep.ExitCode() != ExitOK {
		t.Fatalf("verdict %+v, want ok", rep.Verdict)
	}
	for _, l := range rep.Layers {
		if !l.Holds {
			t.Errorf("layer %s does not hold: %s", l.Name, l.Detail)
		}
	}
}

func TestRecord(t *testing.T) {
	f := healthyFacts()
	f.Runtimes[0].Version = "1.1.5" // upstream binary: fails the CVE checks
	rep := Evaluate(f)
	rec := rep.Record(ledger.NewRunID(), startTime, startTime.Add(2e9), []string{"agentbox", "doctor"})
	if err := rec.Validate(); err != nil {
		t.Fatal(err)
	}
	if rec.Kind != ledger.KindDoctor || rec.ExitCode != ExitHost || rec.Verdict() != ledger.VerdictFindings {
		t.Errorf("record kind %s exit %d verdict %s", rec.Kind, rec.ExitCode, rec.Verdict())
	}
	if len(rec.HostVerification) != len(rep.Checks) {
		t.Errorf("%d host verification entries for %d checks", len(rec.HostVerification), len(rep.Checks))
	}
	if got := rec.HostVerification["runc-CVE-2024-21626"]; !strings.HasPrefix(got, "FAIL: ") {
		t.Errorf("runc-CVE-2024-21626 recorded as %q", got)
	}
	if len(rec.Findings) != len(rep.Verdict.Blocking) || len(rec.Probes) != 2 {
		t.Errorf("%d findings for %d blocking results, %d probes", len(rec.Findings), len(rep.Verdict.Blocking), len(rec.Probes))
	}
}

var startTime = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// The default runtime doctor reports is the planner's choice, made from
// the runtimes found, the cgroup layout, the user and the launcher's
// self-test verdicts.
func TestDoctorReportsTheDefaultRuntimeAndWhy(t *testing.T) {
	f := healthyFacts()
	f.Runtimes = []RuntimeFacts{{Name: "runc", Path: "/usr/sbin/runc", Version: "1.1.5"}, {Name: "crun", Path: "/usr/bin/crun", Version: "1.8.1"}}
	for _, c := range []struct {
		verdict policy.SelfTestVerdict
		want    string
	}{{"", "uses crun by default"}, {policy.SelfTestPassed, "passed the self-test of run r9"}, {policy.SelfTestFailed, "uses runc by default"}} {
		f.Default = chooseDefault(f, func(name, _ string) (policy.SelfTestVerdict, string) {
			if name == "crun" {
				return c.verdict, "r9"
			}
			return "", ""
		})
		r, ok := find(Evaluate(f).Checks, "runtime-default")
		if !ok || r.Status != Pass || !strings.Contains(r.Detail, c.want) {
			t.Errorf("crun's verdict %q: %+v, want PASS naming %q", c.verdict, r, c.want)
		}
	}
}

func TestRunscThatRunAcceptsSaysSo(t *testing.T) {
	f := healthyFacts()
	f.Runtimes = append(f.Runtimes, RuntimeFacts{Name: "runsc", Path: "/usr/local/bin/runsc", Version: "v0.0.0-20260905035102-160fafc42237"})
	for _, r := range checkRuntimes(f) {
		if r.ID == "runtime-runsc" {
			if r.Status != Pass || !strings.Contains(r.Detail, "accepts it") || !strings.Contains(r.Detail, "--pass-fd") {
				t.Errorf("runtime-runsc: %s %q, want PASS saying run accepts it and how", r.Status, r.Detail)
			}
			return
		}
	}
	t.Error("no runtime-runsc result")
}

// A runsc that run refuses is shown refused in every mode of the matrix,
// never "launches".
func TestRefusedRunscModesRefuse(t *testing.T) {
	f := healthyFacts()
	f.Runtimes = append(f.Runtimes, RuntimeFacts{Name: "runsc", Path: "/usr/bin/runsc", Version: "0.0", Refusal: "no --pass-fd"})
	seen := 0
	for _, m := range runtimeModes(f) {
		if m.Runtime != "runsc" {
			continue
		}
		seen++
		if m.Holds || m.Refused == "" || !strings.Contains(m.Summary(), "refuses") {
			t.Errorf("runsc %s: holds %v, summary %q", m.Mode, m.Holds, m.Summary())
		}
	}
	if seen == 0 {
		t.Error("no runsc mode")
	}
}
