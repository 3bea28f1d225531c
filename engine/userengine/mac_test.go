package userengine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func testMacRun() MacRun {
	return MacRun{
		Account: "_agentbox", UID: 451, GID: 451, Groups: []int{12, 61, 451}, Port: 41234,
		Workspace: "/Users/alice/src/my project", Owner: 501, OwnerGID: 20, Home: "/Users/Shared/agentbox/home/runs/r1",
		Starter: "/private/var/run/agentbox/bin/agentbox-123-456", Protected: []string{"/Users/alice/src/my project/.git/hooks"},
		Tmp: "/Users/Shared/agentbox/home/runs/r1/tmp", AgentDir: "/opt/homebrew/lib/node_modules/@anthropic-ai/claude-code",
		Profile: "/private/var/run/agentbox/r1/agent.sb", Anchor: "/private/var/run/agentbox/r1/pf.anchor", PFToken: "1234567890",
	}
}

// TestMacArgvGolden pins every command the macOS engine runs, argument by
// argument (one quoted argument a line), and the anchor it loads.
func TestMacArgvGolden(t *testing.T) {
	r := testMacRun()
	var b strings.Builder
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"grant", r.GrantArgv()},
		{"pf load", r.PFLoadArgv()},
		{"pf show", r.PFShowArgv()},
		{"starter", r.StarterArgv()},
		{"kill", r.KillArgv()},
		{"alive", r.AliveArgv()},
		{"pf flush", r.PFFlushArgv()},
		{"pf release", r.PFReleaseArgv()},
		{"revoke", r.RevokeArgv()},
		{"give back", r.GiveBackArgv()},
	} {
		b.WriteString("# " + c.name + "\n")
		for _, a := range c.argv {
			b.WriteString(strconv.Quote(a) + "\n")
		}
	}
	b.WriteString("# anchor\n" + r.AnchorRules())
	profile, err := r.ProfileText()
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("# profile\n" + profile)
	golden := filepath.Join("testdata", "mac-run.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("argvs differ from %s (go test -update to rewrite):\n%s", golden, b.String())
	}
}

func TestMacStarterArgv(t *testing.T) {
	r := testMacRun()
	argv := r.StarterArgv()
	if argv[0] != "/usr/bin/sandbox-exec" || argv[1] != "-f" || argv[2] != r.Profile {
		t.Fatalf("not sandbox-exec -f PROFILE: %q", argv)
	}
	n := slices.Index(argv, "--")
	if n < 0 || !slices.Equal(argv[n+1:], []string{r.Starter, StarterArg}) {
		t.Errorf("the starter is not the argv's tail after --: %q", argv)
	}
	if !slices.Contains(argv[:n], "-DAGENTBOX_STARTER="+r.Starter) || !slices.Contains(argv[:n], "-DWORKSPACE="+r.Workspace) {
		t.Errorf("the profile's parameters are missing: %q", argv)
	}
}

func TestHasUserRules(t *testing.T) {
	rules := "pass out quick on lo0 inet proto tcp from any to 127.0.0.1 port = 41234 user = 451 flags S/SA keep state\nblock return out quick inet proto tcp all user = 451\n"
	if !HasUserRules(rules, 451) {
		t.Error("the anchor's rules of uid 451 not seen")
	}
	if HasUserRules(rules, 45) || HasUserRules(strings.ReplaceAll(rules, "451", "4510"), 451) || HasUserRules("", 451) {
		t.Error("rules of another uid taken for uid 451's")
	}
}

func TestParsePFToken(t *testing.T) {
	for _, tc := range []struct {
		out, want string
		ok        bool
	}{
		{"No ALTQ support in kernel\nALTQ related functions disabled\npf enabled\nToken : 10246723874586107791\n", "10246723874586107791", true},
		{"pf already enabled\nToken : 42\n", "42", true},
		{"pf enabled\n", "", false},
		{"Token : ; rm -rf /\n", "", false},
	} {
		got, err := ParsePFToken(tc.out)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParsePFToken(%q) = %q, %v; want %q ok=%v", tc.out, got, err, tc.want, tc.ok)
		}
	}
}

func TestParsePids(t *testing.T) {
	got, err := ParsePids("123\n456\n")
	if err != nil || !slices.Equal(got, []int{123, 456}) {
		t.Errorf("ParsePids = %v, %v", got, err)
	}
	if got, err := ParsePids(""); err != nil || got != nil {
		t.Errorf("ParsePids(\"\") = %v, %v; want none", got, err)
	}
	if _, err := ParsePids("12 x\n"); err == nil {
		t.Error("ParsePids accepted a non-pid")
	}
}
