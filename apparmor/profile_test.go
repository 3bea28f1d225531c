package apparmor

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the rendered profile "+RenderedFile)

// TestRenderedCopy fails when the checked-in profile differs from what the
// template renders; 'go generate ./apparmor' rewrites it.
func TestRenderedCopy(t *testing.T) {
	got, err := Render(DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(RenderedFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(RenderedFile)
	if err != nil {
		t.Fatalf("%v (run 'go generate ./apparmor')", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s is stale (-checked-in +rendered); run 'go generate ./apparmor':\n%s", RenderedFile, diff)
	}
}

func TestRenderName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"agentbox-default", true},
		{"agentbox-run.1_2", true},
		{"", false},
		{"Agentbox", false},
		{"-x", false},
		{"a b", false},
		{"a{b}", false},
		{"x\nprofile evil", false},
		{strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		got, err := Render(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("Render(%q) err = %v, want ok=%v", tt.name, err, tt.ok)
			continue
		}
		if tt.ok && !declares(got, tt.name) {
			t.Errorf("Render(%q) does not declare the profile", tt.name)
		}
	}
}

// rules returns the rule lines of a rendered profile body, trimmed, with
// any trailing comment removed.
func rules(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestProfileRules checks the boundary the profile promises, rule by rule.
func TestProfileRules(t *testing.T) {
	text, err := Render("p")
	if err != nil {
		t.Fatal(err)
	}
	got := rules(t, text)
	mustHave := []string{
		"deny capability,",
		"deny mount,", "deny remount,", "deny umount,", "deny pivot_root,",
		"deny @{PROC}/* wklx,",
		"deny @{PROC}/[^0-9]*/** wklx,",
		"deny @{PROC}/sys/** wklx,",
		"deny @{PROC}/sysrq-trigger rwklx,",
		"deny @{PROC}/kcore rwklx,",
		"deny /sys/** wklx,",
		"deny /sys/kernel/security/** rwklx,",
		"deny /sys/firmware/** rwklx,",
		"ptrace (trace, read, tracedby, readby) peer=p,",
	}
	for _, r := range mustHave {
		if !containsLine(got, r) {
			t.Errorf("profile lacks rule %q", r)
		}
	}
	forbidden := []*regexp.Regexp{
		regexp.MustCompile(`^(audit\s+)?(allow\s+)?capability\b`), // any granted capability
		regexp.MustCompile(`^(allow\s+)?(mount|umount|remount|pivot_root)\b`),
		regexp.MustCompile(`^(allow\s+)?change_profile\b`),
		regexp.MustCompile(`^(allow\s+)?(ptrace|signal)\b[^=]*,$`), // no peer: any process
		regexp.MustCompile(`^(allow\s+)?userns\b`),
		regexp.MustCompile(`^#include`),
	}
	peer := regexp.MustCompile(`peer=([^,\s]+)`)
	for _, r := range got {
		// ptrace and sending signals only within the profile
		if strings.HasPrefix(r, "ptrace") || (strings.HasPrefix(r, "signal") && strings.Contains(r, "send")) {
			if m := peer.FindStringSubmatch(r); m == nil || m[1] != "p" {
				t.Errorf("rule %q reaches beyond the profile", r)
			}
		}
		for _, re := range forbidden {
			if re.MatchString(r) {
				t.Errorf("profile has forbidden rule %q (%s)", r, re)
			}
		}
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestEveryRuleHasAReason: inside the profile body, every rule is preceded
// by a comment, directly or as part of a block of rules under one comment.
func TestEveryRuleHasAReason(t *testing.T) {
	inBody, commented := false, false
	for i, l := range strings.Split(profileTemplate, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "profile "):
			inBody, commented = true, false
		case !inBody || l == "}":
		case l == "":
			commented = false
		case strings.HasPrefix(l, "#"):
			commented = true
		case !commented:
			t.Errorf("profile.tmpl:%d: rule %q has no comment saying why", i+1, l)
		}
	}
	if !inBody {
		t.Fatal("profile.tmpl has no profile body")
	}
}
