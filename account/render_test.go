package account

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil { //nolint:gosec // a checked-in golden file
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./account -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test ./account -update and review the diff):\n%s", name, got)
	}
}

func planText(t *testing.T, p Plan) string {
	t.Helper()
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDarwinPlanGolden(t *testing.T) {
	golden(t, "darwin-setup.golden", planText(t, DarwinSetup(451)))
	golden(t, "darwin-remove.golden", planText(t, DarwinRemove()))
	for _, c := range DarwinSetup(451).Commands {
		if !filepath.IsAbs(c.Argv[0]) {
			t.Errorf("%s: macOS commands are run by absolute path", c)
		}
	}
}

func TestLinuxPlans(t *testing.T) {
	golden(t, "linux-setup.golden", planText(t, LinuxSetup(LinuxState{})))
	golden(t, "linux-remove.golden", planText(t, LinuxRemove(LinuxState{UserExists: true, GroupExists: true, HomeExists: true})))
	if p := LinuxSetup(LinuxState{UserExists: true, GroupExists: true, HomeExists: true}); len(p.Commands) != 0 {
		t.Errorf("setup of an existing account runs %v, want nothing", p.Commands)
	}
	if p := LinuxRemove(LinuxState{}); len(p.Commands) != 0 {
		t.Errorf("remove of a missing account runs %v, want nothing", p.Commands)
	}
	if p := LinuxSetup(LinuxState{GroupExists: true}); !strings.Contains(p.Commands[0].String(), "--gid agentbox-agent") {
		t.Errorf("with the group left over, useradd must reuse it: %s", p.Commands[0])
	}
}

func TestChooseDarwinID(t *testing.T) {
	uids, err := ParseDSCLList("root 0\n_nixbld1 351\n_agentx 450\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := ChooseDarwinID(uids, []int{451, 20}); err != nil || id != 452 {
		t.Errorf("ChooseDarwinID = %d, %v; want 452 (450 a user, 451 a group)", id, err)
	}
	var all []int
	for i := DarwinIDMin; i <= DarwinIDMax; i++ {
		all = append(all, i)
	}
	if _, err := ChooseDarwinID(nil, all); !errors.Is(err, ErrNoFreeID) {
		t.Errorf("full range: %v, want ErrNoFreeID", err)
	}
	if _, err := ParseDSCLList("root zero\n"); err == nil {
		t.Error("a non-numeric id parsed")
	}
}

func TestPFAnchorGolden(t *testing.T) {
	got := RenderPFAnchor(451, 18443)
	golden(t, "pf-anchor.golden", got)
	var rules []string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.HasPrefix(l, "#") {
			rules = append(rules, l)
		}
	}
	sawBlock := map[string]bool{}
	for _, r := range rules {
		if !strings.HasSuffix(r, "user 451") && !strings.HasSuffix(r, "user 451 keep state") {
			t.Errorf("rule without the account's user: %s", r)
		}
		if !strings.Contains(r, " quick ") {
			t.Errorf("rule is not quick: %s", r)
		}
		fam := regexp.MustCompile(`\binet6?\b`).FindString(r)
		switch {
		case strings.HasPrefix(r, "pass") && sawBlock[fam]:
			t.Errorf("pass after block for %s: %s", fam, r)
		case strings.HasPrefix(r, "pass") && !strings.Contains(r, "port 18443"):
			t.Errorf("pass to something other than the gateway: %s", r)
		case strings.HasPrefix(r, "block"):
			sawBlock[fam] = true
		}
	}
	if !sawBlock["inet"] || !sawBlock["inet6"] {
		t.Errorf("blocks for inet and inet6 both needed, got %v", sawBlock)
	}
}

// seatbeltOps are the Seatbelt operations the profile may use.
var seatbeltOps = regexp.MustCompile(`^(file-read\*|file-write\*|file-read-metadata|network-outbound|process-exec|process-fork|process-info\*|mach-lookup|sysctl-read|ipc-posix-sem|ipc-posix-shm-read-data|pseudo-tty|signal|default)$`)

func TestSeatbeltGolden(t *testing.T) {
	got, err := RenderSeatbelt(18443, []string{"/Users/alice/src/p/.git/hooks", "/Users/alice/src/p/agentbox.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "agent.sb.golden", got)
	depth := 0
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, ";;") {
			continue
		}
		for _, r := range strings.ReplaceAll(l, `#"^/dev/ttys[0-9]+$"`, "") {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth < 0 {
				t.Fatalf("unbalanced ) in %s", l)
			}
		}
		if m := regexp.MustCompile(`^\((allow|deny) ([a-z*-]+(?: [a-z*-]+)*)`).FindStringSubmatch(l); m != nil {
			for _, op := range strings.Fields(m[2]) {
				if !seatbeltOps.MatchString(op) {
					t.Errorf("operation %q not in the allowlist: %s", op, l)
				}
			}
		}
	}
	if depth != 0 {
		t.Errorf("unbalanced parentheses: depth %d at the end", depth)
	}
	args := strings.Join(SeatbeltArgs("/p.sb", SeatbeltParams{Home: "/h", Workspace: "/w", Tmp: "/t", Agent: "/a", Starter: "/s"}), " ")
	for _, m := range regexp.MustCompile(`\(param "([A-Z_]+)"\)`).FindAllStringSubmatch(got, -1) {
		if !strings.Contains(args, " -D"+m[1]+"=") {
			t.Errorf("param %s has no -D in %s", m[1], args)
		}
	}
	for _, closed := range []string{"mDNSResponder", "com.apple.dnssd.service"} {
		i := strings.LastIndex(got, closed)
		if i < 0 || !strings.HasPrefix(got[strings.LastIndex(got[:i], "\n")+1:], "(deny") {
			t.Errorf("%s must be closed by a deny, last in the profile", closed)
		}
	}
	ws := strings.Index(got, `(subpath (param "WORKSPACE"))`)
	if p := strings.Index(got, `(deny file-write* (subpath "/Users/alice/src/p/.git/hooks") (subpath "/Users/alice/src/p/agentbox.yaml"))`); p < 0 || p < ws {
		t.Errorf("the protected paths must be denied writes after the workspace's allow")
	}
	for _, bad := range []string{`/w/a"b`, `/w/a\b`, "/w/a\nb", "relative"} {
		if _, err := RenderSeatbelt(1, []string{bad}); err == nil {
			t.Errorf("RenderSeatbelt accepted protected path %q", bad)
		}
	}
	if n := strings.Count(got, "network-outbound (remote"); n != 1 || !strings.Contains(got, `"localhost:18443"`) {
		t.Errorf("network: want exactly one outbound allow, to localhost:18443")
	}
}
