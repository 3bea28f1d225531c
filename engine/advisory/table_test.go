package advisory

import (
	"strings"
	"testing"
)

func TestTableLoads(t *testing.T) {
	tab, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range tab.Entries {
		if seen[e.Key()] {
			t.Errorf("%s listed twice", e.Key())
		}
		seen[e.Key()] = true
		for _, s := range append(e.Sources, sourcesOf(e.Distros)...) {
			if !strings.HasPrefix(s, "https://") {
				t.Errorf("%s: source %q is not an https URL", e.Key(), s)
			}
		}
	}
	for _, want := range []string{
		"runc-CVE-2019-5736", "runc-CVE-2024-21626", "runc-CVE-2024-45310",
		"runc-CVE-2025-31133", "runc-CVE-2025-52565", "runc-CVE-2025-52881", "crun-CVE-2019-5736",
	} {
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

func TestTableRejectsBadData(t *testing.T) {
	ok := Entry{Runtime: "runc", ID: "CVE-1", Severity: "high", Fixed: []string{"1.0"}, Attack: "x", Sources: []string{"https://x"}}
	if err := (Table{Entries: []Entry{ok}}).validate(); err != nil {
		t.Fatalf("a good entry: %v", err)
	}
	for name, change := range map[string]func(*Entry){
		"bad fixed version": func(e *Entry) { e.Fixed = []string{"one.two"} },
		"bad introduced":    func(e *Entry) { e.Introduced = "x" },
		"no sources":        func(e *Entry) { e.Sources = nil },
		"no attack":         func(e *Entry) { e.Attack = "" },
		"unknown severity":  func(e *Entry) { e.Severity = "critical-ish" },
		"unknown condition": func(e *Entry) { e.Needs = []Condition{"image"} },
		"distro both": func(e *Entry) {
			e.Distros = []DistroFix{{OS: "debian", Fixed: "1", UnfixedThrough: "1", Source: "https://y"}}
		},
		"distro neither": func(e *Entry) { e.Distros = []DistroFix{{OS: "debian", Source: "https://y"}} },
		"distro no source": func(e *Entry) {
			e.Distros = []DistroFix{{OS: "debian", Fixed: "1"}}
		},
	} {
		e := ok
		change(&e)
		if err := (Table{Entries: []Entry{e}}).validate(); err == nil {
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
	two := []string{"1.1.14", "1.2.0-rc.3"}
	for v, want := range map[string]bool{"1.1.13": false, "1.1.14": true, "1.2.0-rc.2": false, "1.2.0": true, "1.0.3": false} {
		if got := fixedUpstream(mustParse(v), two); got != want {
			t.Errorf("fixedUpstream(%s, %v) = %v, want %v", v, two, got, want)
		}
	}
}

// Every condition an entry can need is decided by a Mode field, and says
// why a mode without it is not exposed.
func TestConditionsAreComplete(t *testing.T) {
	for c, def := range conditions {
		if def.holds == nil || def.absent == "" {
			t.Errorf("condition %s has no decision or no reason", c)
		}
		if def.holds(Mode{}) == def.holds(Mode{Rootfs: true, UserNS: true, Rootless: true, Exec: true}) {
			t.Errorf("condition %s does not depend on the mode", c)
		}
	}
}
