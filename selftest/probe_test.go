package selftest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureEnv is an Env whose procfs is testdata/probe (the mounts of a
// weakened sandbox) and whose environment is environ.
func fixtureEnv(cfg InitConfig, environ ...string) *Env {
	cfg.Version, cfg.RunID = ProtocolVersion, "run-test"
	return &Env{Config: &cfg, Proc: "testdata/probe", Environ: environ}
}

func run(t *testing.T, name string, e *Env) Result {
	t.Helper()
	p, ok := Lookup(name)
	if !ok {
		t.Fatalf("no probe %s", name)
	}
	r := p.Run(e)
	if !r.Verify() || r.RunID != "run-test" || r.Probe != name {
		t.Errorf("%s: malformed result %+v", name, r)
	}
	return r
}

func TestHostHomeProbe(t *testing.T) {
	home := HostPath{Path: "/home/ana", Dev: "8:2", FSPath: "/ana"}
	if r := run(t, "host-home-not-mounted", fixtureEnv(InitConfig{Canaries: Canaries{HostHome: []HostPath{home}}})); r.Decision != Allow || r.Observed != "mounted" {
		t.Errorf("home bound at /host-home: %s %s (%s)", r.Decision, r.Observed, r.Detail)
	}
	other := HostPath{Path: "/home/bob", Dev: "8:3", FSPath: "/bob"}
	if r := run(t, "host-home-not-mounted", fixtureEnv(InitConfig{Canaries: Canaries{HostHome: []HostPath{other}}})); r.Decision != Deny {
		t.Errorf("home on an unmounted filesystem: %s %s", r.Decision, r.Detail)
	}
	if r := run(t, "host-home-not-mounted", fixtureEnv(InitConfig{})); r.Decision != Unknown || r.Observed != "no-canary" {
		t.Errorf("no canary: %s %s", r.Decision, r.Observed)
	}
}

func TestPlantedSecretProbe(t *testing.T) {
	dir := t.TempDir()
	secret := []byte("canary-7f3a91c2-value")
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(canary, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	hp := HostPath{Path: canary, Dev: "255:255", FSPath: canary}
	c := Canaries{Files: []HostPath{hp}, FileSHA256: SHA256(secret), EnvName: "AGENTBOX_CANARY_X", EnvSHA256: SHA256([]byte("env-canary-value"))}
	tests := []struct {
		name    string
		c       Canaries
		environ []string
		want    Decision
		obs     string
	}{
		{"file readable", c, nil, Allow, "readable"},
		{"env by name", Canaries{EnvName: c.EnvName}, []string{"AGENTBOX_CANARY_X=whatever"}, Allow, "env-present"},
		{"env value renamed", Canaries{EnvName: c.EnvName, EnvSHA256: c.EnvSHA256}, []string{"OTHER=env-canary-value"}, Allow, "env-value-present"},
		{"other content", Canaries{Files: []HostPath{hp}, FileSHA256: SHA256([]byte("x"))}, nil, Deny, "other-content"},
		{"absent", Canaries{Files: []HostPath{{Path: dir + "/gone", Dev: "1:1", FSPath: "/gone"}}, FileSHA256: c.FileSHA256, EnvName: "N"}, []string{"A=b"}, Deny, "absent"},
		{"unverifiable", Canaries{Files: []HostPath{hp}}, nil, Unknown, "readable-unverified"},
	}
	for _, tc := range tests {
		r := run(t, "planted-secret-unreadable", fixtureEnv(InitConfig{Canaries: tc.c}, tc.environ...))
		if r.Decision != tc.want || r.Observed != tc.obs {
			t.Errorf("%s: %s %s, want %s %s (%s)", tc.name, r.Decision, r.Observed, tc.want, tc.obs, r.Detail)
		}
		b, _ := json.Marshal(r)
		for _, s := range []string{string(secret), "env-canary-value", "whatever"} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s: the result carries a secret value: %s", tc.name, b)
			}
		}
	}
}

func TestEnvironmentProbe(t *testing.T) {
	tests := []struct {
		environ, allow []string
		want           Decision
		detail         string
	}{
		{[]string{"PATH=/usr/bin", "HOME=/home/agent", "TERM=xterm"}, nil, Deny, ""},
		{[]string{"GITHUB_TOKEN=abc", "AWS_SECRET_ACCESS_KEY=x", "PATH=/bin"}, nil, Allow, "AWS_SECRET_ACCESS_KEY,GITHUB_TOKEN"},
		{[]string{"AGENTBOX_GATEWAY_TOKEN=t"}, []string{"AGENTBOX_GATEWAY_TOKEN"}, Deny, ""},
		{[]string{"NOTES=sk-ant-api03-aaaaaaaaaaaaaaaaaaaa"}, nil, Allow, "NOTES"},
		{[]string{"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1"}, nil, Allow, "SSH_AUTH_SOCK"},
		{[]string{"KEYBOARD=us", "MONKEY=1", "sk=short"}, nil, Deny, ""},
	}
	for _, tc := range tests {
		r := run(t, "environment-is-clean", fixtureEnv(InitConfig{AllowEnv: tc.allow}, tc.environ...))
		if r.Decision != tc.want || (tc.detail != "" && !strings.HasSuffix(r.Detail, tc.detail)) {
			t.Errorf("%v: %s %q", tc.environ, r.Decision, r.Detail)
		}
		if strings.Contains(r.Detail, "sk-ant") || strings.Contains(r.Detail, "abc") {
			t.Errorf("%v: detail carries a value: %q", tc.environ, r.Detail)
		}
	}
}

func TestFixtureProcProbes(t *testing.T) {
	if r := run(t, "only-loopback", fixtureEnv(InitConfig{})); r.Decision != Allow || r.Detail != "interfaces besides lo: eth0" {
		t.Errorf("only-loopback: %s %s", r.Decision, r.Detail)
	}
	r := run(t, "container-socket-absent", fixtureEnv(InitConfig{}))
	if r.Decision != Allow || !strings.Contains(r.Observed, "mounted") {
		t.Errorf("container-socket-absent with a bound docker.sock: %s %s", r.Decision, r.Observed)
	}
}

func TestRunSelectionAndContext(t *testing.T) {
	cfg := InitConfig{Version: ProtocolVersion, Probes: []string{"gateway-reachable", "environment-is-clean"}}
	var got []string
	err := Run(context.Background(), fixtureEnv(cfg), func(r Result) error { got = append(got, r.Probe); return nil })
	if err != nil || strings.Join(got, ",") != "environment-is-clean,gateway-reachable" {
		t.Errorf("Run: %v %v (want catalog order)", got, err)
	}
	cfg.Probes = []string{"no-such-probe"}
	if err := cfg.Validate(); err == nil {
		t.Error("Validate accepted an unknown probe")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, fixtureEnv(InitConfig{Probes: []string{"gateway-reachable"}}), func(Result) error { return nil }); err == nil {
		t.Error("Run ignored a cancelled context")
	}
}

func TestCatalogNames(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Catalog() {
		if seen[p.Name] || p.run == nil || p.Summary == "" || (p.Expect != Deny && p.Expect != Allow) {
			t.Errorf("catalog entry %+v is duplicate or incomplete", p.Name)
		}
		seen[p.Name] = true
	}
	for _, n := range []string{
		"host-home-not-mounted", "planted-secret-unreadable", "container-socket-absent",
		"environment-is-clean", "internet-unreachable", "gateway-reachable",
	} {
		if !seen[n] {
			t.Errorf("the catalog lacks %s (DESIGN.md §5)", n)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []InitConfig{
		{Version: ProtocolVersion + 1},
		{Version: ProtocolVersion - 1},
		{Version: ProtocolVersion, Targets: Targets{Internet: []string{"example.com:443"}}},
		{Version: ProtocolVersion, Targets: Targets{Metadata: []string{"169.254.169.254"}}},
		{Version: ProtocolVersion, Canaries: Canaries{FileSHA256: "md5:abc"}},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate accepted %+v", c)
		}
	}
	good := InitConfig{Version: ProtocolVersion, Targets: Targets{Internet: []string{"10.99.0.2:80", "[fd99::2]:80"}}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestResultDigest(t *testing.T) {
	r := Result{Probe: "p", Target: "t", Expect: Deny, Decision: Deny, Observed: "EPERM", RunID: "r"}
	r.Evidence = r.Digest()
	if !strings.HasPrefix(r.Evidence, "sha256:") || len(r.Evidence) != 71 || !r.Verify() || !r.Passed() {
		t.Fatalf("digest %q", r.Evidence)
	}
	r.Decision = Allow
	if r.Verify() || r.Passed() {
		t.Error("a changed decision still verifies or passes")
	}
}

// TestReadsAnything: the boot-fact read decides on what one read returns,
// not on whether the file opens.
func TestReadsAnything(t *testing.T) {
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "cmdline"), filepath.Join(dir, "empty")
	if err := os.WriteFile(full, []byte("root=UUID=0b3c4d5e ro quiet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path     string
		decision Decision
		observed string
	}{
		{full, Allow, "readable"},
		{empty, Deny, "empty"},
		{"/dev/null", Deny, "masked"},
		{filepath.Join(dir, "gone"), Deny, "absent"},
		{filepath.Join(full, "below-a-file"), Deny, "absent"},
	} {
		if d, o := readsAnything(tc.path); d != tc.decision || o != tc.observed {
			t.Errorf("%s: %s %s, want %s %s", tc.path, d, o, tc.decision, tc.observed)
		}
	}
}
