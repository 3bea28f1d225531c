package advisory

import (
	"strings"
	"testing"
)

var (
	deb12   = Distro{ID: "debian", VersionID: "12"}
	fc39    = Distro{ID: "fedora", VersionID: "39"}
	jammy   = Distro{ID: "ubuntu", VersionID: "22.04"}
	trixie  = Distro{ID: "debian", VersionID: "13"}
	defRoot = Mode{UserNS: true}
	defUser = Mode{UserNS: true, Rootless: true}
	rootfs  = Mode{Rootfs: true, UserNS: true}
)

func deb(name, v string) *Package { return &Package{Manager: "dpkg", Name: name, Version: v} }
func rpm(name, v string) *Package { return &Package{Manager: "rpm", Name: name, Version: v} }

// The version half of the judgement, on an entry that every mode exposes.
func TestJudgeVersion(t *testing.T) {
	entry := Entry{
		Runtime: "runc", ID: "CVE-2099-0001", Severity: "high", Summary: "a flaw", Introduced: "1.0.0-rc93",
		Fixed: []string{"1.1.12"}, Attack: "anything", Sources: []string{"https://example.invalid/advisory"},
		Distros: []DistroFix{
			{OS: "debian", VersionID: "12", Package: "runc", Fixed: "1.1.5+ds1-1+deb12u1", Source: "https://example.invalid/dsa"},
			{OS: "fedora", VersionID: "39", Package: "runc", Fixed: "2:1.1.8-2.fc39", Source: "https://example.invalid/fedora"},
			{OS: "ubuntu", VersionID: "22.04", Package: "runc", UnfixedThrough: "1.1.4-0ubuntu1~22.04.3", Source: "https://example.invalid/usn"},
		},
	}
	for _, tc := range []struct {
		name    string
		version string
		pkg     *Package
		d       Distro
		verdict Verdict
		detail  string
	}{
		{"upstream binary, fixed", "1.1.12", nil, deb12, Fixed, "includes the upstream fix"},
		{"upstream binary, vulnerable", "1.1.5", nil, deb12, Exposed, "not from a package"},
		{"upstream binary, before the flaw", "1.0.0-rc92", nil, deb12, NotAffected, "not affected"},
		{"debian backport", "1.1.5+ds1", deb("runc", "1.1.5+ds1-1+deb12u1"), deb12, Fixed, "patched"},
		{"debian before the backport", "1.1.5+ds1", deb("runc", "1.1.5+ds1-1"), deb12, Exposed, "predates debian 12's fix"},
		{"debian later revision", "1.1.5+ds1", deb("runc", "1.1.5+ds1-1+deb12u2"), deb12, Fixed, "patched"},
		{"debian binNMU sorts before the backport", "1.1.5+ds1", deb("runc", "1.1.5+ds1-1+b1"), deb12, Exposed, "predates"},
		{"fedora backport with epoch", "1.1.8", rpm("runc", "2:1.1.8-2.fc39"), fc39, Fixed, "patched"},
		{"fedora before the backport", "1.1.8", rpm("runc", "2:1.1.8-1.fc39"), fc39, Exposed, "predates fedora 39's fix"},
		{"ubuntu known unfixed", "1.1.4", deb("runc", "1.1.4-0ubuntu1~22.04.3"), jammy, Exposed, "has released none"},
		{"ubuntu newer than known unfixed", "1.1.4", deb("runc", "1.1.4-0ubuntu1~22.04.4"), jammy, Undetermined, "does not know"},
		{"packaged, distribution unknown to the table", "1.1.5", deb("runc", "1.1.5-1"), trixie, Undetermined, "does not know whether debian 13 backported it"},
		{"packaged, upstream already fixed", "1.2.0", deb("runc", "1.2.0-1"), Distro{ID: "arch"}, Fixed, "includes the upstream fix"},
		{"unreadable version", "", nil, deb12, Undetermined, "cannot read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := judge(entry, Runtime{Name: "runc", Path: "/usr/sbin/runc", Version: tc.version, Package: tc.pkg}, tc.d, defRoot, "2026-12-01")
			if f.Verdict != tc.verdict || !strings.Contains(f.Detail, tc.detail) || f.Key != "runc-CVE-2099-0001" || f.Mode != "default" {
				t.Errorf("got %s %s %q, want %s containing %q", f.Key, f.Verdict, f.Detail, tc.verdict, tc.detail)
			}
			if (f.Verdict != Fixed && f.Verdict != NotAffected) != (f.Fix != "") {
				t.Errorf("%s with fix %q", f.Verdict, f.Fix)
			}
			if f.Blocks() != (tc.verdict == Exposed || tc.verdict == Undetermined) {
				t.Errorf("%s: Blocks() = %v", f.Verdict, f.Blocks())
			}
		})
	}
}

// The mode half: the same affected version, exposed or not by each
// condition.
func TestJudgeExposure(t *testing.T) {
	rt := Runtime{Name: "runc", Path: "/usr/local/bin/runc", Version: "1.1.0"}
	for _, tc := range []struct {
		needs   []Condition
		mode    Mode
		verdict Verdict
		reason  string
	}{
		{nil, defRoot, Exposed, "exposed in the default mode"},
		{[]Condition{NeedsRootfs}, defRoot, NotExposed, "the default root holds no image"},
		{[]Condition{NeedsRootfs}, rootfs, Exposed, "exposed in the --rootfs mode"},
		{[]Condition{NeedsNoUserNS}, defRoot, NotExposed, "user namespace that does not map host root"},
		{[]Condition{NeedsNoUserNS}, Mode{}, Exposed, "exposed"},
		{[]Condition{NeedsRootless}, defRoot, NotExposed, "runs as root"},
		{[]Condition{NeedsRootless}, defUser, Exposed, "exposed"},
		{[]Condition{NeedsExec}, rootfs, NotExposed, "never starts a process with the runtime's exec"},
		{[]Condition{NeedsRootfs, NeedsRootless}, rootfs, NotExposed, "runs as root"},
		{[]Condition{NeedsRootfs, NeedsRootless}, Mode{Rootfs: true, UserNS: true, Rootless: true}, Exposed, "exposed"},
	} {
		e := Entry{Runtime: "runc", ID: "CVE-2099-0002", Severity: "high", Fixed: []string{"1.2.8"}, Needs: tc.needs, Attack: "a prepared root", Sources: []string{"https://example.invalid"}}
		f := judge(e, rt, deb12, tc.mode, "2026-12-01")
		if f.Verdict != tc.verdict || !strings.Contains(f.Exposure, tc.reason) {
			t.Errorf("needs %v in %+v: %s %q, want %s containing %q", tc.needs, tc.mode, f.Verdict, f.Exposure, tc.verdict, tc.reason)
		}
		if f.Verdict == NotExposed && (!f.Residual() || f.Blocks() || !strings.Contains(f.Exposure, "the attack needs a prepared root")) {
			t.Errorf("not exposed: residual=%v blocks=%v %q", f.Residual(), f.Blocks(), f.Exposure)
		}
	}
}

func TestJudgeSoftEntriesNeverBlock(t *testing.T) {
	for _, sev := range []string{"low", "hardening"} {
		e := Entry{Runtime: "runc", ID: "CVE-2099-0003", Severity: sev, Fixed: []string{"1.3.6"}, Attack: "x", Sources: []string{"https://example.invalid"}}
		for _, rt := range []Runtime{
			{Name: "runc", Version: "1.1.5"},
			{Name: "runc", Version: "1.1.5", Package: deb("runc", "1.1.5-1")},
			{Name: "runc", Version: "garbage"},
		} {
			f := judge(e, rt, deb12, rootfs, "2026-12-01")
			if f.Blocks() || !f.Residual() {
				t.Errorf("%s %+v: %s blocks=%v residual=%v; a %s entry is a residual", sev, rt, f.Verdict, f.Blocks(), f.Residual(), sev)
			}
		}
	}
}

// The real table, for the runtimes agentbox meets: upstream binaries on
// either side of each fix, Debian 12's packages with and without the
// CVE-2024-21626 backport, in each mode.
func TestJudgeTable(t *testing.T) {
	tab, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	bookworm := Runtime{Name: "runc", Path: "/usr/sbin/runc", Version: "1.1.5+ds1", Package: deb("runc", "1.1.5+ds1-1+deb12u1")}
	bookwormOld := Runtime{Name: "runc", Path: "/usr/sbin/runc", Version: "1.1.5+ds1", Package: deb("runc", "1.1.5+ds1-1")}
	up := func(v string) Runtime { return Runtime{Name: "runc", Path: "/usr/local/sbin/runc", Version: v} }
	crun := Runtime{Name: "crun", Path: "/usr/bin/crun", Version: "1.8.1", Package: deb("crun", "1.8.1-1+deb12u1")}
	for _, tc := range []struct {
		name string
		rt   Runtime
		mode Mode
		want map[string]Verdict
	}{
		{"bookworm runc, default root", bookworm, defRoot, map[string]Verdict{
			"CVE-2019-5736": Fixed, "CVE-2023-25809": Fixed, "CVE-2023-27561": Fixed, "CVE-2023-28642": Fixed,
			"CVE-2024-21626": Fixed, "CVE-2024-45310": NotExposed,
			"CVE-2025-31133": NotExposed, "CVE-2025-52565": NotExposed, "CVE-2025-52881": NotExposed, "CVE-2026-41579": NotExposed,
		}},
		{"bookworm runc, rootless default root", bookworm, defUser, map[string]Verdict{
			"CVE-2023-25809": Fixed, "CVE-2024-21626": Fixed, "CVE-2025-31133": NotExposed, "CVE-2025-52881": NotExposed,
		}},
		{"bookworm runc, --rootfs", bookworm, rootfs, map[string]Verdict{
			"CVE-2019-5736": Fixed, "CVE-2024-21626": Fixed, "CVE-2024-45310": Exposed,
			"CVE-2025-31133": Exposed, "CVE-2025-52565": Exposed, "CVE-2025-52881": Exposed, "CVE-2026-41579": Exposed,
		}},
		{"bookworm runc before DSA-5615-1, default root", bookwormOld, defRoot, map[string]Verdict{
			"CVE-2024-21626": Exposed, "CVE-2025-31133": NotExposed,
		}},
		{"upstream 1.1.11", up("1.1.11"), defRoot, map[string]Verdict{"CVE-2024-21626": Exposed, "CVE-2025-31133": NotExposed}},
		{"upstream 1.1.12", up("1.1.12"), defRoot, map[string]Verdict{"CVE-2024-21626": Fixed, "CVE-2024-45310": NotExposed}},
		{"upstream 1.1.14, --rootfs", up("1.1.14"), rootfs, map[string]Verdict{"CVE-2024-45310": Fixed, "CVE-2025-31133": Exposed}},
		{"upstream 1.0.0-rc92", up("1.0.0-rc92"), defRoot, map[string]Verdict{"CVE-2024-21626": NotAffected, "CVE-2025-52565": NotExposed}},
		{"upstream 1.0.0-rc2", up("1.0.0-rc2"), rootfs, map[string]Verdict{"CVE-2025-52565": NotAffected, "CVE-2025-31133": Exposed}},
		{"upstream 1.2.7, --rootfs", up("1.2.7"), rootfs, map[string]Verdict{"CVE-2025-31133": Exposed, "CVE-2025-52881": Exposed}},
		{"upstream 1.2.8, --rootfs", up("1.2.8"), rootfs, map[string]Verdict{
			"CVE-2025-31133": Fixed, "CVE-2025-52565": Fixed, "CVE-2025-52881": Fixed, "CVE-2026-41579": Exposed,
		}},
		{"upstream 1.3.3, --rootfs", up("1.3.3"), rootfs, map[string]Verdict{"CVE-2025-31133": Fixed, "CVE-2026-41579": Exposed}},
		{"upstream 1.3.6, --rootfs", up("1.3.6"), rootfs, map[string]Verdict{"CVE-2025-31133": Fixed, "CVE-2026-41579": Fixed}},
		{"upstream 1.4.0-rc.2, --rootfs", up("1.4.0-rc.2"), rootfs, map[string]Verdict{"CVE-2025-31133": Exposed}},
		{"upstream 1.4.0-rc.3, --rootfs", up("1.4.0-rc.3"), rootfs, map[string]Verdict{"CVE-2025-31133": Fixed}},
		{"bookworm crun, default root", crun, defRoot, map[string]Verdict{
			"CVE-2019-5736": Fixed, "CVE-2022-27650": Fixed, "procfs-hardening": NotExposed, "CVE-2026-30892": NotAffected, "CVE-2026-47766": NotExposed,
		}},
		{"bookworm crun, --rootfs", crun, rootfs, map[string]Verdict{"procfs-hardening": Exposed, "CVE-2026-47766": Exposed}},
		{"crun 1.20 (exec flaw), --rootfs", Runtime{Name: "crun", Version: "1.20"}, rootfs, map[string]Verdict{"CVE-2026-30892": NotExposed, "procfs-hardening": Exposed}},
		{"crun 1.28", Runtime{Name: "crun", Version: "1.28"}, rootfs, map[string]Verdict{"CVE-2026-30892": Fixed, "CVE-2026-47766": Fixed, "procfs-hardening": Fixed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]Finding{}
			for _, f := range Judge(tab, tc.rt, deb12, tc.mode) {
				got[f.ID] = f
			}
			for id, want := range tc.want {
				f, ok := got[id]
				if !ok || f.Verdict != want {
					t.Errorf("%s: %s (%s), want %s", id, f.Verdict, f.Line(), want)
				}
			}
		})
	}
}

// What bookworm's runc is told to do: the 2025 fixes exist only upstream,
// and an unfixed distribution package names the upstream releases.
func TestJudgeFixLines(t *testing.T) {
	tab, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	bookwormOld := Runtime{Name: "runc", Version: "1.1.5+ds1", Package: deb("runc", "1.1.5+ds1-1")}
	for _, f := range Judge(tab, bookwormOld, deb12, rootfs) {
		switch f.ID {
		case "CVE-2025-31133":
			if !strings.Contains(f.Fix, "release 1.2.8, 1.3.3, 1.4.0-rc.3 or later") || f.Source != "https://security-tracker.debian.org/tracker/CVE-2025-31133" {
				t.Errorf("%s: fix %q, source %q", f.Key, f.Fix, f.Source)
			}
		case "CVE-2024-21626":
			if !strings.Contains(f.Fix, "upgrade package runc to 1.1.5+ds1-1+deb12u1 or later: apt-get update && apt-get install --only-upgrade runc") {
				t.Errorf("%s: fix %q", f.Key, f.Fix)
			}
		}
	}
}

func TestJudgeOtherRuntimes(t *testing.T) {
	tab, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if fs := Judge(tab, Runtime{Name: "runsc", Version: "release-20240513.0"}, deb12, rootfs); len(fs) != 0 {
		t.Errorf("runsc: %d findings from a table without runsc entries", len(fs))
	}
}
