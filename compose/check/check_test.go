package check

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/compose/internal/composetest"
	"github.com/agentbox/agentbox/policy"
)

// fakeToken has a GitHub token's shape and is worthless.
const fakeToken = "ghp_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE0000"

// labFaults are the lab's five faults as compose overrides of the agent
// service, with the finding each must raise. HOME is a fake home directory.
var labFaults = []struct {
	name, override, code string
}{
	{"home", "services:\n  agent:\n    volumes: [\"HOME:/home/ana:ro\"]\n", audit.CodeHomeDirectory},
	{"socket", "services:\n  agent:\n    volumes: [\"/var/run/docker.sock:/var/run/docker.sock\"]\n", audit.CodeContainerSocket},
	{"secret", "services:\n  agent:\n    environment:\n      GITHUB_TOKEN: " + fakeToken + "\n", audit.CodeSecretInEnv},
	{"network", "services:\n  agent:\n    networks: [open]\nnetworks:\n  open: {}\n", audit.CodeNetworkPolicy},
	{"autoapprove", "services:\n  agent:\n    command: [codex, --dangerously-bypass-approvals-and-sandbox]\n", audit.CodeAutoApprove},
}

const testToken = composetest.Token

func testPlan(ws string) *policy.Plan { return composetest.Plan(ws) }

// testOptions renders into ws/agentbox-compose with fixed inputs.
func testOptions(ws string, command ...string) compose.Options {
	return compose.Options{
		Command: command, Image: "example.org/agents/codex:1", OutDir: filepath.Join(ws, "agentbox-compose"),
		Token: testToken, GatewayBinary: composetest.ELF(elf.EM_X86_64, false), CABundle: composetest.CABundle,
		Arch: specs.ArchX86_64,
	}
}

// renderedProject writes the codex project for a temporary workspace and
// returns the workspace and the output directory.
func renderedProject(t *testing.T) (ws, out string) {
	t.Helper()
	ws = t.TempDir()
	opts := testOptions(ws, "codex")
	o, r, err := Prepare(context.Background(), testPlan(ws), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Unaccepted(); len(f) > 0 {
		t.Fatalf("the rendered project fails its audit: %+v", f)
	}
	if _, err := compose.Write(opts.OutDir, o.Files, false); err != nil {
		t.Fatal(err)
	}
	return ws, opts.OutDir
}

func TestPrepareAuditsClean(t *testing.T) {
	for _, cmd := range [][]string{{"codex"}, {"claude"}, {"sh", "-c", "make"}} {
		ws := t.TempDir()
		opts := testOptions(ws, cmd...)
		out, r, err := Prepare(context.Background(), testPlan(ws), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out.File(compose.ComposeFile) == nil {
			t.Fatal("no compose.yaml rendered")
		}
		if _, err := os.Stat(opts.OutDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: Prepare touched the output directory: %v", cmd, err)
		}
		var tolerated []string
		for _, c := range r.Containers {
			for _, f := range c.Findings {
				if f.Fails() {
					t.Errorf("%v: %s: %s %s: %s", cmd, c.Name, f.Code, f.Subject, f.Detail)
					continue
				}
				if f.Code == audit.CodeNoUserNS && (!f.Accepted || !strings.HasPrefix(f.AcceptedReason, compose.UserNSReason)) {
					t.Errorf("%v: %s: %s is not accepted by the project's label: %+v", cmd, c.Name, f.Code, f)
				}
				tolerated = append(tolerated, serviceName(c.Name)+" "+f.Code)
			}
		}
		want := "agent user-namespace-not-used,gateway network-policy-not-applied,gateway user-namespace-not-used"
		if got := strings.Join(tolerated, ","); got != want {
			t.Errorf("%v: tolerated %s, want %s", cmd, got, want)
		}
	}
}

// TestPrepareRefuses: a plan whose translation fails the audit (a pass-through
// credential, a writable extra bind) is reported, not silently fixed.
func TestPrepareRefuses(t *testing.T) {
	ws := t.TempDir()
	plan := testPlan(ws)
	plan.Env = append(plan.Env, "GITHUB_TOKEN="+fakeToken)
	extra := t.TempDir()
	plan.Mounts = append(plan.Mounts, policy.Mount{Kind: policy.KindExtra, Source: extra, Destination: extra})
	_, r, err := Prepare(context.Background(), plan, testOptions(ws, "codex"), nil)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	final := filepath.Join(ws, "agentbox-compose", compose.ComposeFile)
	for _, f := range r.Unaccepted() {
		codes[f.Code] = true
		if f.File != final || f.Line == 0 {
			t.Errorf("%s is located at %s:%d, not in %s", f.Code, f.File, f.Line, final)
		}
	}
	if !codes[audit.CodeSecretInEnv] || !codes[audit.CodeExtraWritable] || len(codes) != 2 {
		t.Errorf("failing codes %v, want secret-in-environment and extra-writable-mount", codes)
	}
	for _, tc := range []struct {
		subject string
		fail    int
	}{{"", 1}, {extra, 1}, {"/elsewhere", 2}} {
		plan.Accepted = []policy.Acceptance{{Code: audit.CodeExtraWritable, Subject: tc.subject, Reason: "a build cache"}}
		_, r, _ = Prepare(context.Background(), plan, testOptions(ws, "codex"), nil)
		if n := len(r.Unaccepted()); n != tc.fail {
			t.Errorf("extra-writable-mount accepted for subject %q: %d findings fail, want %d", tc.subject, n, tc.fail)
		}
	}
}

// TestCheckLabFaults: each fault, added to agentbox's own project through an
// override file, is named with a compose fix; without it the check is clean.
func TestCheckLabFaults(t *testing.T) {
	ws, out := renderedProject(t)
	home := filepath.Join(t.TempDir(), "home", "ana")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	o := Options{Workspaces: []string{ws}, HomeDirs: []string{home}}
	base := filepath.Join(out, compose.ComposeFile)
	r, err := Files(context.Background(), []string{base}, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Unaccepted(); len(f) > 0 {
		t.Fatalf("agentbox's own project fails --check: %+v", f)
	}
	for _, fault := range labFaults {
		t.Run(fault.name, func(t *testing.T) {
			override := filepath.Join(t.TempDir(), "override.yaml")
			if err := os.WriteFile(override, []byte(strings.ReplaceAll(fault.override, "HOME", home)), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Files(context.Background(), []string{base, override}, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			n, err := WriteFindings(&buf, r)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, c := range r.Containers {
				for _, f := range c.Findings {
					if f.Code != fault.code {
						continue
					}
					found = found || serviceName(c.Name) == compose.AgentService
					if fix := Fix(f, compose.AgentService); !strings.Contains(fix, "services.agent") {
						t.Errorf("fix for %s does not name the service: %s", f.Code, fix)
					}
				}
			}
			if !found {
				t.Errorf("the audit does not name %s:\n%s", fault.code, buf.String())
			}
			if fault.code != audit.CodeAutoApprove && (n == 0 || !strings.Contains(buf.String(), "fix: ")) {
				t.Errorf("no fix printed:\n%s", buf.String())
			}
		})
	}
}

// TestAuditGatewayOnly: the egress exception holds for agentbox's gateway
// service only; an agent on a network with a way out still fails.
func TestAuditGatewayOnly(t *testing.T) {
	open := []audit.Network{{Name: "egress", Internal: audit.No}}
	mk := func(name, image string) audit.Container {
		return audit.Container{
			Name: name, Image: image, Source: "compose", User: "1000:1000", ReadOnlyRoot: true,
			CapDrop: []string{"ALL"}, CapsKnown: true, NoNewPrivileges: audit.Yes, Seccomp: audit.Seccomp{Mode: "default"},
			MemoryLimit: 1 << 30, PidsLimit: 10, Networks: open, UserNS: audit.No,
			Env: []audit.EnvVar{{Name: "GATEWAY_TOKEN", Value: testToken}},
		}
	}
	r := Services([]audit.Container{
		mk("p_gateway_1", compose.GatewayImageRepo+":abc"),
		mk("gateway", "busybox"),
		mk("agent", compose.GatewayImageRepo+":abc"),
	}, Options{})
	var fails []int
	for _, c := range r.Containers {
		fails = append(fails, len(c.Findings)-countTolerated(c.Findings))
	}
	if !slices.Equal(fails, []int{0, 1, 1}) {
		t.Errorf("failing findings per container = %v, want [0 1 1] (the token variable is allowed everywhere)", fails)
	}
}

func countTolerated(fs []audit.Finding) int {
	n := 0
	for _, f := range fs {
		if !f.Fails() {
			n++
		}
	}
	return n
}

// TestFixesCoverCatalog: every finding code has a compose-specific fix.
func TestFixesCoverCatalog(t *testing.T) {
	for _, r := range audit.Catalog() {
		if _, ok := composeFixes[r.Code]; !ok {
			t.Errorf("no compose fix for %s", r.Code)
		}
	}
}

func TestCheckBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "compose.yaml")
	if err := os.WriteFile(bad, []byte("services:\n  agent:\n    image: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Files(context.Background(), []string{bad}, nil, Options{})
	var in *audit.InputError
	if !errors.As(err, &in) {
		t.Errorf("err = %v, want an *audit.InputError", err)
	}
}
