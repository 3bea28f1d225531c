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
		Account: "_agentbox", UID: 451, Port: 41234,
		Workspace: "/Users/alice/src/my project", Home: "/Users/Shared/agentbox/home/runs/r1",
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
		{"agent", r.AgentArgv([]string{"HOME=" + r.Home, "PATH=/usr/bin:/bin", "TMPDIR=" + r.Tmp}, []string{"claude", "--print", "hi"})},
		{"kill", r.KillArgv()},
		{"alive", r.AliveArgv()},
		{"pf flush", r.PFFlushArgv()},
		{"pf release", r.PFReleaseArgv()},
		{"revoke", r.RevokeArgv()},
	} {
		b.WriteString("# " + c.name + "\n")
		for _, a := range c.argv {
			b.WriteString(strconv.Quote(a) + "\n")
		}
	}
	b.WriteString("# anchor\n" + r.AnchorRules())
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

func TestMacAgentArgvKeepsTheEnvironmentAndTheCommandApart(t *testing.T) {
	r := testMacRun()
	env := []string{"HOME=" + r.Home, "ANTHROPIC_API_KEY=abx-token"}
	cmd := []string{"sh", "-c", "echo -D x"}
	argv := r.AgentArgv(env, cmd)
	if argv[0] != "/usr/bin/sudo" || argv[1] != "-n" || argv[3] != "_agentbox" {
		t.Fatalf("not sudo -n -u the account: %q", argv)
	}
	if !slices.Equal(argv[len(argv)-len(cmd):], cmd) {
		t.Errorf("the command is not the argv's tail: %q", argv)
	}
	i := slices.Index(argv, "-i")
	if i < 0 || !slices.Equal(argv[i+1:i+1+len(env)], env) || argv[i+1+len(env)] != "/usr/bin/sandbox-exec" {
		t.Errorf("env -i is not followed by exactly the environment, then sandbox-exec: %q", argv)
	}
	if n := slices.Index(argv, "--"); n < 0 || slices.Index(argv[n+1:], "--") < 0 {
		t.Errorf("want sudo's -- and sandbox-exec's -- before the command: %q", argv)
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

func TestCheckEnv(t *testing.T) {
	if err := CheckEnv([]string{"HOME=/h", "A_1=x=y", "EMPTY="}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"-i=1", "NOEQUALS", "=v", "1A=v", "A B=v", "/bin/sh=x"} {
		if CheckEnv([]string{bad}) == nil {
			t.Errorf("CheckEnv accepted %q", bad)
		}
	}
}
