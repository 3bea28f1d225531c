package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown top-level key", "workspace: .\nnetwork_mode: host\n", "agentbox.yaml:2: network_mode: unknown key \"network_mode\""},
		{"unknown nested key", "limits:\n  memory: 1GiB\n  swap: 2GiB\n", "agentbox.yaml:3: limits.swap: unknown key \"swap\""},
		{"wrong type", "limits:\n  pids: many\n", `agentbox.yaml:2: limits.pids: expected a whole number, got "many"`},
		{"list instead of scalar", "runtime: [runc]\n", "agentbox.yaml:1: runtime: expected a string, got a list"},
		{"list instead of mapping", "binds: [/x]\n", "agentbox.yaml:1: binds: expected a mapping with read_only, read_write, got a list"},
		{"scalar instead of list", "env:\n  allow: HOME\n", `agentbox.yaml:2: env.allow: expected a list of strings, got "HOME"`},
		{"negative where unsigned", "limits:\n  cpu_weight: -1\n", `agentbox.yaml:2: limits.cpu_weight: expected a whole number of 0 or more, got "-1"`},
		{"second document", "runtime: runc\n---\nruntime: crun\n", "agentbox.yaml:2: a second YAML document"},
		{"not a mapping", "- runc\n", "agentbox.yaml:1: expected a mapping with accept, address, binds, engine, env, gateway, isolation, limits, network, protect, rootfs, runtime, workspace, got a list"},
		{"broken yaml", "limits: [\n", "agentbox.yaml:"},
		{"unknown key in accept entry", "accept:\n  - code: x\n    reason: y\n    until: never\n", "agentbox.yaml:4: accept[0].until: unknown key"},
		{"duplicate key", "runtime: runc\nruntime: crun\n", `agentbox.yaml:2: runtime: duplicate key "runtime", first given on line 1`},
		{"alias", "runtime: &r runc\nrootfs: *r\n", "agentbox.yaml:2: rootfs: alias *r: aliases are not read"},
		{"known keys named", "limits:\n  swap: 1\n", "agentbox.yaml:2: limits.swap: unknown key \"swap\"; known keys here: cpu_weight, memory, pids"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse("agentbox.yaml", []byte(tt.doc))
			var in *InputError
			if !errors.As(err, &in) {
				t.Fatalf("Parse: %v, want an *InputError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q\nwant prefix %q", err, tt.want)
			}
		})
	}
}

// TestParseReportsTheFirstProblem: of several mistakes the first in the
// file is reported, on one line, as an InputError.
func TestParseReportsTheFirstProblem(t *testing.T) {
	_, _, err := Parse("agentbox.yaml", []byte("runtim: runc\nlimits:\n  pids: many\n"))
	want := `agentbox.yaml:1: runtim: unknown key "runtim"; known keys here: accept, address, binds, engine, env, gateway, isolation, limits, network, protect, rootfs, runtime, workspace`
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
	var in *InputError
	if !errors.As(err, &in) || in.Line != 1 || in.Field != "runtim" || !strings.HasPrefix(in.Fix, "known keys here: ") {
		t.Errorf("errors.As: %+v", in)
	}
}

func TestParseFullPolicy(t *testing.T) {
	doc := `workspace: proj
binds:
  read_only: [/opt/sdk]
  read_write: [/srv/cache]
env:
  allow: [GOFLAGS, "NPM_*"]
limits: {memory: 2GiB, pids: 100, cpu_weight: 50}
runtime: crun
accept:
  - code: extra-writable-mount
    subject: /srv/cache
    reason: shared build cache
`
	p, src, err := Parse("agentbox.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{
		Workspace: "proj",
		Binds:     Binds{ReadOnly: []string{"/opt/sdk"}, ReadWrite: []string{"/srv/cache"}},
		Env:       Env{Allow: []string{"GOFLAGS", "NPM_*"}},
		Limits:    Limits{Memory: "2GiB", Pids: 100, CPUWeight: 50},
		Runtime:   "crun",
		Accept:    []Acceptance{{Code: "extra-writable-mount", Subject: "/srv/cache", Reason: "shared build cache"}},
	}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("policy (-want +got):\n%s", d)
	}
	if src.Lines["limits"] != 7 || src.Lines["accept[0].reason"] != 12 {
		t.Errorf("lines: %v", src.Lines)
	}
	if err := Validate(p, src); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestEmptyPolicyIsDefault(t *testing.T) {
	for _, doc := range []string{"", "# just a comment\n", "---\n"} {
		p, _, err := Parse("agentbox.yaml", []byte(doc))
		if err != nil || !cmp.Equal(p, Policy{}) {
			t.Errorf("Parse(%q) = %+v, %v; want the zero policy", doc, p, err)
		}
	}
}

func TestValidateNamesTheLine(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"limits:\n  memory: lots\n", "agentbox.yaml:2: limits.memory:"},
		{"limits:\n  cpu_weight: 20000\n", "agentbox.yaml:2: limits.cpu_weight:"},
		{"runtime: docker\n", "agentbox.yaml:1: runtime: unknown runtime \"docker\""},
		{"accept:\n  - code: runs-as-root\n", "agentbox.yaml:2: accept[0].reason: missing reason"},
		{"accept:\n  - code: Not A Code\n    reason: x\n", "agentbox.yaml:2: accept[0].code:"},
		{"env:\n  allow: [\"A-B\"]\n", "agentbox.yaml:2: env.allow[0]:"},
		{"engine: docker\n", "agentbox.yaml:1: engine: unknown engine \"docker\""},
		{"limits:\n  pids: 9\naddress: /run/c.sock\n", "agentbox.yaml:3: address: address \"/run/c.sock\" is a containerd daemon's socket, and this policy does not choose the containerd engine"},
		{"engine: containerd\naddress: run/c.sock\n", "agentbox.yaml:2: address: address \"run/c.sock\" is not an absolute path"},
	}
	for _, tt := range tests {
		p, src, err := Parse("agentbox.yaml", []byte(tt.doc))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.doc, err)
		}
		err = Validate(p, src)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Validate(%q) = %v, want prefix %q", tt.doc, err, tt.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := map[string]int64{"4GiB": 4 << 30, "512MiB": 512 << 20, "2G": 2e9, "100": 100, "1.5GiB": 3 << 29, "10 kb": 10000, "10KiB": 10240, "3TiB": 3 << 40}
	for in, want := range tests {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1", "4 parsecs", "0"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

func TestMerge(t *testing.T) {
	file := Policy{Runtime: "crun", Binds: Binds{ReadOnly: []string{"/a"}}, Limits: Limits{Pids: 10}}
	flags := Policy{Binds: Binds{ReadOnly: []string{"/b"}}, Env: Env{Allow: []string{"GOFLAGS"}}, Limits: Limits{Memory: "1G"}}
	file.Engine, file.Address = EngineContainerd, "/run/a.sock"
	flags.Address = "/run/b.sock"
	got := file.Merge(flags)
	want := Policy{
		Engine: EngineContainerd, Address: "/run/b.sock",
		Runtime: "crun",
		Binds:   Binds{ReadOnly: []string{"/a", "/b"}},
		Env:     Env{Allow: append(append([]string{}, DefaultEnvAllow...), "GOFLAGS")},
		Limits:  Limits{Pids: 10, Memory: "1G"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Merge (-want +got):\n%s", d)
	}
}

// A later source that turns the engine away from containerd takes the
// daemon's address with it (--engine runtime over a policy file's engine:
// containerd and address:); one that names an address keeps it, for
// Validate and the launcher to refuse without engine: containerd.
func TestMergeEngineAwayFromContainerdDropsItsAddress(t *testing.T) {
	file := Policy{Engine: EngineContainerd, Address: "/run/a.sock"}
	if got := file.Merge(Policy{Engine: EngineRuntime}); got.Engine != EngineRuntime || got.Address != "" {
		t.Errorf("engine runtime over containerd: %q %q, want runtime and no address", got.Engine, got.Address)
	}
	if got := file.Merge(Policy{Engine: EngineRuntime, Address: "/run/b.sock"}); got.Address != "/run/b.sock" {
		t.Errorf("engine runtime and an address over containerd: address %q, want /run/b.sock kept", got.Address)
	}
	if got := file.Merge(Policy{Engine: EngineContainerd}); got.Address != "/run/a.sock" {
		t.Errorf("engine containerd again: address %q, want /run/a.sock kept", got.Address)
	}
}

// Every field survives a merge: the review's surviving mutants dropped the
// file's Accept, ignored LocalTCP and lost an upstream's KeyFile.
func TestMergeKeepsEveryField(t *testing.T) {
	file := Policy{
		Accept:  []Acceptance{{Code: "extra-writable-mount", Reason: "cache"}},
		Network: Network{Allow: []string{"a.example:443"}},
		Gateway: Gateway{Upstreams: map[string]Upstream{
			"openai": {KeyFile: "/k", Auth: "bearer"},
			"local":  {URL: "http://127.0.0.1:1/v1", Models: []string{"m"}, CAFile: "/ca"},
		}},
	}
	flags := Policy{
		Accept:  []Acceptance{{Code: "no-resource-limits", Reason: "test"}},
		Network: Network{Allow: []string{"b.example:443"}, LocalTCP: true},
		Gateway: Gateway{Upstreams: map[string]Upstream{"openai": {URL: "http://127.0.0.1:2/v1"}}},
	}
	file.Engine, file.Address = EngineContainerd, "/run/a.sock"
	flags.Address = "/run/b.sock"
	got := file.Merge(flags)
	want := Policy{
		Engine: EngineContainerd, Address: "/run/b.sock",
		Accept:  []Acceptance{{Code: "extra-writable-mount", Reason: "cache"}, {Code: "no-resource-limits", Reason: "test"}},
		Network: Network{Allow: []string{"a.example:443", "b.example:443"}, LocalTCP: true},
		Gateway: Gateway{Upstreams: map[string]Upstream{
			"openai": {URL: "http://127.0.0.1:2/v1", KeyFile: "/k", Auth: "bearer"},
			"local":  {URL: "http://127.0.0.1:1/v1", Models: []string{"m"}, CAFile: "/ca"},
		}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Merge (-want +got):\n%s", d)
	}
	// And a later source's auth, models and CA replace the earlier's.
	over := Policy{Gateway: Gateway{Upstreams: map[string]Upstream{"local": {Auth: "x-api-key", Models: []string{"n"}, CAFile: "/ca2"}}}}
	if u := got.Merge(over).Gateway.Upstreams["local"]; u.Auth != "x-api-key" || !cmp.Equal(u.Models, []string{"n"}) || u.CAFile != "/ca2" || u.URL == "" {
		t.Errorf("merged local route: %+v", u)
	}
}

func TestAcceptanceCovers(t *testing.T) {
	tests := []struct {
		name          string
		a             Acceptance
		code, subject string
		want          bool
	}{
		{"code only", Acceptance{Code: "extra-writable-mount"}, "extra-writable-mount", "/srv/cache -> /srv/cache", true},
		{"other code", Acceptance{Code: "extra-writable-mount"}, "home-directory-mounted", "/srv/cache", false},
		{"exact subject", Acceptance{Code: "c", Subject: "OPENAI_API_KEY"}, "c", "OPENAI_API_KEY", true},
		{"exact source of a bind", Acceptance{Code: "c", Subject: "/srv/cache"}, "c", "/srv/cache -> /cache", true},
		{"beneath the path", Acceptance{Code: "c", Subject: "/srv/cache/"}, "c", "/srv/cache/go -> /srv/cache/go", true},
		{"a substring is not a prefix", Acceptance{Code: "c", Subject: "/srv/cache"}, "c", "/home/ana/srv/cache-keys -> /k", false},
		{"a sibling with the same prefix", Acceptance{Code: "c", Subject: "/srv/cache"}, "c", "/srv/cache-keys", false},
		{"a word is matched exactly", Acceptance{Code: "c", Subject: "KEY"}, "c", "OPENAI_API_KEY", false},
	}
	for _, tt := range tests {
		if got := tt.a.Covers(tt.code, tt.subject); got != tt.want {
			t.Errorf("%s: Covers(%q, %q) = %v, want %v", tt.name, tt.code, tt.subject, got, tt.want)
		}
	}
}
