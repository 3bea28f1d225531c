package doctor

import (
	"strings"
	"testing"
)

func TestCVETableLoads(t *testing.T) {
	tab, err := RuntimeCVEs()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range tab.Entries {
		key := e.Runtime + "-" + e.ID
		if seen[key] {
			t.Errorf("%s listed twice", key)
		}
		seen[key] = true
		for _, s := range append(e.Sources, sourcesOf(e.Distros)...) {
			if !strings.HasPrefix(s, "https://") {
				t.Errorf("%s: source %q is not an https URL", key, s)
			}
		}
	}
	for _, want := range []string{"runc-CVE-2019-5736", "runc-CVE-2024-21626", "runc-CVE-2025-31133", "runc-CVE-2025-52565", "runc-CVE-2025-52881", "crun-CVE-2019-5736"} {
		if !seen[want] {
			t.Errorf("table lacks %s", want)
		}
	}
}

func sourcesOf(ds []DistroFix) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Source)
	}
	return out
}

func TestCVETableRejectsBadData(t *testing.T) {
	for name, tab := range map[string]CVETable{
		"bad fixed version": {Entries: []CVEEntry{{Runtime: "runc", ID: "CVE-1", Fixed: []string{"one.two"}, Sources: []string{"https://x"}}}},
		"no sources":        {Entries: []CVEEntry{{Runtime: "runc", ID: "CVE-1", Fixed: []string{"1.0"}}}},
		"distro both":       {Entries: []CVEEntry{{Runtime: "runc", ID: "CVE-1", Fixed: []string{"1.0"}, Sources: []string{"https://x"}, Distros: []DistroFix{{OS: "debian", Fixed: "1", UnfixedThrough: "1", Source: "https://y"}}}}},
		"distro neither":    {Entries: []CVEEntry{{Runtime: "runc", ID: "CVE-1", Fixed: []string{"1.0"}, Sources: []string{"https://x"}, Distros: []DistroFix{{OS: "debian", Source: "https://y"}}}}},
	} {
		if err := tab.validate(); err == nil {
			t.Errorf("%s: validate accepted it", name)
		}
	}
}

func TestFixedUpstream(t *testing.T) {
	branches := []string{"1.2.8", "1.3.3", "1.4.0-rc.3"}
	for v, want := range map[string]bool{
		"1.1.5": false, "1.2.7": false, "1.2.8": true, "1.2.9": true, "1.3.2": false, "1.3.3": true,
		"1.4.0-rc.2": false, "1.4.0-rc.3": true, "1.4.0": true, "1.5.0": true, "2.0.0": true, "0.9": false,
	} {
		if got := fixedUpstream(mustParse(v), branches); got != want {
			t.Errorf("fixedUpstream(%s) = %v, want %v", v, got, want)
		}
	}
	if !fixedUpstream(mustParse("1.0.0-rc93"), []string{"1.0.0-rc7"}) || fixedUpstream(mustParse("1.0.0-rc6"), []string{"1.0.0-rc7"}) {
		t.Error("release candidates are misordered")
	}
}

func TestJudgeCVE(t *testing.T) {
	entry := CVEEntry{
		Runtime: "runc", ID: "CVE-2099-0001", Severity: "high", Summary: "a flaw", Introduced: "1.0.0-rc93",
		Fixed: []string{"1.1.12"}, Sources: []string{"https://example.invalid/advisory"},
		Distros: []DistroFix{
			{OS: "debian", VersionID: "12", Package: "runc", Fixed: "1.1.5+ds1-1+deb12u1", Source: "https://example.invalid/dsa"},
			{OS: "fedora", VersionID: "39", Package: "runc", Fixed: "2:1.1.8-2.fc39", Source: "https://example.invalid/fedora"},
			{OS: "ubuntu", VersionID: "22.04", Package: "runc", UnfixedThrough: "1.1.4-0ubuntu1~22.04.3", Source: "https://example.invalid/usn"},
		},
	}
	deb12 := OSRelease{ID: "debian", VersionID: "12"}
	fc39 := OSRelease{ID: "fedora", VersionID: "39"}
	jammy := OSRelease{ID: "ubuntu", VersionID: "22.04"}
	deb := func(v string) *Package { return &Package{Manager: "dpkg", Name: "runc", Version: v} }
	rpm := func(v string) *Package { return &Package{Manager: "rpm", Name: "runc", Version: v} }
	for _, tc := range []struct {
		name    string
		version string
		pkg     *Package
		os      OSRelease
		status  Status
		detail  string
	}{
		{"upstream binary, fixed", "1.1.12", nil, deb12, Pass, "includes the upstream fix"},
		{"upstream binary, vulnerable", "1.1.5", nil, deb12, Fail, "not from a package"},
		{"upstream binary, before the flaw", "1.0.0-rc92", nil, deb12, Pass, "not affected"},
		{"debian backport", "1.1.5+ds1", deb("1.1.5+ds1-1+deb12u1"), deb12, Pass, "patched"},
		{"debian before the backport", "1.1.5+ds1", deb("1.1.5+ds1-1"), deb12, Fail, "predates debian 12's fix"},
		{"debian later revision", "1.1.5+ds1", deb("1.1.5+ds1-1+deb12u2"), deb12, Pass, "patched"},
		{"fedora backport with epoch", "1.1.8", rpm("2:1.1.8-2.fc39"), fc39, Pass, "patched"},
		{"fedora before the backport", "1.1.8", rpm("2:1.1.8-1.fc39"), fc39, Fail, "predates fedora 39's fix"},
		{"ubuntu known unfixed", "1.1.4", deb("1.1.4-0ubuntu1~22.04.3"), jammy, Fail, "has released none"},
		{"ubuntu newer than known unfixed", "1.1.4", deb("1.1.4-0ubuntu1~22.04.4"), jammy, Unknown, "does not know"},
		{"packaged, distribution unknown to the table", "1.1.5", deb("1.1.5-1"), OSRelease{ID: "debian", VersionID: "13"}, Unknown, "does not know whether debian 13 backported it"},
		{"packaged, upstream already fixed", "1.2.0", deb("1.2.0-1"), OSRelease{ID: "arch"}, Pass, "includes the upstream fix"},
		{"unreadable version", "", nil, deb12, Unknown, "cannot read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := judgeCVE(entry, RuntimeFacts{Name: "runc", Path: "/usr/sbin/runc", Version: tc.version, Package: tc.pkg}, tc.os, "2026-11-29")
			if r.Status != tc.status || !strings.Contains(r.Detail, tc.detail) || r.ID != "runc-CVE-2099-0001" || r.Layer != LayerRuntime {
				t.Errorf("got %s %s %q, want %s containing %q", r.ID, r.Status, r.Detail, tc.status, tc.detail)
			}
			if r.Status != Pass && r.Fix == "" {
				t.Errorf("%s without a fix line", r.Status)
			}
		})
	}
}

func TestJudgeCVELowSeverityNeverBlocks(t *testing.T) {
	e := CVEEntry{Runtime: "runc", ID: "CVE-2099-0002", Severity: "low", Fixed: []string{"1.3.6"}, Sources: []string{"https://example.invalid"}}
	for _, rt := range []RuntimeFacts{
		{Name: "runc", Version: "1.1.5"},
		{Name: "runc", Version: "1.1.5", Package: &Package{Manager: "dpkg", Name: "runc", Version: "1.1.5-1"}},
		{Name: "runc", Version: "garbage"},
	} {
		r := judgeCVE(e, rt, OSRelease{ID: "debian", VersionID: "12"}, "2026-11-29")
		if r.Status != Warn || r.Blocks() {
			t.Errorf("%+v: %s, blocks=%v; a low-severity entry must warn", rt, r.Status, r.Blocks())
		}
	}
}
