package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/account"
)

func darwinText(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "darwin", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stockMac is the facts of a Mac as setup-user leaves it, pf enabled.
func stockMac(t *testing.T) *Facts {
	return &Facts{User: UserFacts{EUID: 0}, Darwin: &DarwinFacts{
		PFInfo: darwinText(t, "pfctl-s-info-enabled.txt"), PFRules: darwinText(t, "pfctl-s-rules-stock.txt"),
		PFAnchors: darwinText(t, "pfctl-s-anchors.txt"), Account: darwinText(t, "dscl-read-setup.txt"),
		Groups: darwinText(t, "id-Gn-setup.txt"),
	}}
}

func darwinResult(t *testing.T, f *Facts, check func(*Facts) []Result) Result {
	t.Helper()
	rs := check(f)
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1: %+v", len(rs), rs)
	}
	return rs[0]
}

func TestDarwinChecksPassOnAStockMac(t *testing.T) {
	f := stockMac(t)
	for _, c := range []func(*Facts) []Result{checkDarwinPF, checkDarwinPFAnchors, checkDarwinAccount} {
		if r := darwinResult(t, f, c); r.Status != Pass || r.Layer != LayerDarwinUser || r.Fix != "" {
			t.Errorf("%s: %s %s (fix %q)", r.ID, r.Status, r.Detail, r.Fix)
		}
	}
	rep := Evaluate(f)
	var found bool
	for _, l := range rep.Layers {
		if l.Name == LayerDarwinUser {
			found = true
			if !l.Holds || !strings.Contains(l.Detail, `anchor "com.apple/*"`) {
				t.Errorf("layer %+v", l)
			}
		}
	}
	if !found {
		t.Errorf("no %s layer in %+v", LayerDarwinUser, rep.Layers)
	}
}

// Every other host has no darwin checks and no darwin layer.
func TestDarwinChecksAbsentElsewhere(t *testing.T) {
	f := &Facts{}
	for _, c := range []func(*Facts) []Result{checkDarwinPF, checkDarwinPFAnchors, checkDarwinAccount} {
		if rs := c(f); rs != nil {
			t.Errorf("results on a host with no darwin facts: %+v", rs)
		}
	}
	for _, l := range Evaluate(f).Layers {
		if l.Name == LayerDarwinUser {
			t.Errorf("layer %+v on a host with no darwin facts", l)
		}
	}
}

func TestDarwinPF(t *testing.T) {
	f := stockMac(t)
	f.Darwin.PFInfo = darwinText(t, "pfctl-s-info-disabled.txt")
	if r := darwinResult(t, f, checkDarwinPF); r.Status != Warn || r.Fix != "sudo pfctl -E (keeps pf on until the next boot)" {
		t.Errorf("disabled: %s %s fix %q", r.Status, r.Detail, r.Fix)
	}
	f.Darwin.PFInfo, f.Darwin.PFInfoErr = "", "/sbin/pfctl -s info: exit status 1: pfctl: /dev/pf: Permission denied"
	f.User.EUID = 501
	if r := darwinResult(t, f, checkDarwinPF); r.Status != Unknown || !r.Blocks() || r.Fix != "pfctl needs root: sudo agentbox doctor" {
		t.Errorf("not root: %s %s fix %q", r.Status, r.Detail, r.Fix)
	}
	f.Darwin.PFInfo, f.Darwin.PFInfoErr = "Debug: Urgent\n", ""
	if r := darwinResult(t, f, checkDarwinPF); r.Status != Unknown {
		t.Errorf("no status line: %s", r.Status)
	}
}

func TestDarwinPFAnchors(t *testing.T) {
	for _, tc := range []struct {
		rules, anchors, detail, fix string
	}{
		{"pfctl-s-rules-no-anchor.txt", "", `no anchor "com.apple/*" rule`, "sudo pfctl -f /etc/pf.conf"},
		{"pfctl-s-rules-on-en0.txt", "", "only for some packets", "sudo pfctl -f /etc/pf.conf"},
		{"pfctl-s-rules-pass-quick.txt", "", `1 pass quick rule(s) come before anchor "com.apple/*" (first: "pass out quick on lo0 all flags S/SA keep state")`, `move the anchor "com.apple/*" line of /etc/pf.conf above those rules`},
		{"", "", "no filter rule", "sudo pfctl -f /etc/pf.conf"},
		{"pfctl-s-rules-stock.txt", "  com.apple/250.ApplicationFirewall\n", "lists no com.apple anchor", "sudo pfctl -f /etc/pf.conf"},
	} {
		f := stockMac(t)
		f.Darwin.PFRules, f.Darwin.PFAnchors = "", tc.anchors
		if tc.rules != "" {
			f.Darwin.PFRules = darwinText(t, tc.rules)
		}
		r := darwinResult(t, f, checkDarwinPFAnchors)
		if r.Status != Fail || !strings.Contains(r.Detail, tc.detail) || !strings.Contains(r.Fix, tc.fix) {
			t.Errorf("%s: %s %q fix %q, want FAIL with %q and fix %q", tc.rules, r.Status, r.Detail, r.Fix, tc.detail, tc.fix)
		}
	}
	m := parsePFRules(darwinText(t, "pfctl-s-rules-stock.txt"))
	if m.Rules != 2 || m.Line != 2 || m.Anchor != `anchor "com.apple/*" all` || m.PassQuick != nil {
		t.Errorf("stock rules parse as %+v", m)
	}
}

func TestDarwinAccount(t *testing.T) {
	f := stockMac(t)
	f.Darwin.Account, f.Darwin.Groups = darwinText(t, "dscl-read-unlocked.txt"), darwinText(t, "id-Gn-staff.txt")
	r := darwinResult(t, f, checkDarwinAccount)
	if r.Status != Fail {
		t.Fatalf("unlocked account: %s %s", r.Status, r.Detail)
	}
	for _, want := range []string{
		"sudo /usr/bin/dscl . -create /Users/_agentbox IsHidden 1",
		"sudo /usr/bin/dscl . -create /Users/_agentbox UserShell /usr/bin/false",
		"sudo /usr/bin/dscl . -create /Users/_agentbox Password '*'",
		"sudo /usr/bin/dscl . -delete /Users/_agentbox AuthenticationAuthority",
		"sudo /usr/sbin/dseditgroup -o edit -d _agentbox -t user staff",
		"sudo /usr/sbin/dseditgroup -o edit -d _agentbox -t user access_bpf",
	} {
		if !strings.Contains(r.Fix, want) {
			t.Errorf("fix %q lacks %q", r.Fix, want)
		}
	}
	f.Darwin.Account, f.Darwin.AccountErr = "", "eDSRecordNotFound"
	if r := darwinResult(t, f, checkDarwinAccount); r.Status != Fail || r.Fix != "sudo agentbox setup-user" {
		t.Errorf("no account: %s fix %q", r.Status, r.Fix)
	}
	if a := account.ParseDSCLAttrs(darwinText(t, "dscl-read-setup.txt")); a["RealName"] != "agentbox sandbox" || a["UniqueID"] != "451" {
		t.Errorf("dscl attributes %v", a)
	}
}

// gatherDarwin runs its commands only on a Mac, and each output lands in
// its field.
func TestGatherDarwin(t *testing.T) {
	fx := &fixtureHost{Commands: map[string]string{
		strings.Join(pfInfoArgv, " "):    darwinText(t, "pfctl-s-info-enabled.txt"),
		strings.Join(pfRulesArgv, " "):   darwinText(t, "pfctl-s-rules-stock.txt"),
		strings.Join(pfAnchorsArgv, " "): darwinText(t, "pfctl-s-anchors.txt"),
		strings.Join(dsclReadArgv, " "):  darwinText(t, "dscl-read-setup.txt"),
	}}
	f := &Facts{}
	gatherDarwin(context.Background(), Host{Root: t.TempDir(), Sys: fx}, f)
	if f.Darwin != nil {
		t.Fatalf("gathered on a host that is no Mac: %+v", f.Darwin)
	}
	gatherDarwin(context.Background(), Host{Root: t.TempDir(), Sys: fx, Darwin: true}, f)
	d := f.Darwin
	if d == nil || d.PFRules == "" || d.Account == "" || d.PFInfoErr != "" || d.GroupsErr == "" {
		t.Fatalf("darwin facts %+v: want every output but id's, whose command the fixture lacks", d)
	}
}
