package netpolicy

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentbox/agentbox/policy"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestParseConfigErrors: every bad config names the file, the line and the
// field; the golden files hold the exact messages.
func TestParseConfigErrors(t *testing.T) {
	for _, name := range []string{"unknown-key", "bad-values", "bad-type", "typo-and-type", "two-docs", "empty"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "config", name+".yaml")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseConfig(name+".yaml", b)
			if err == nil {
				t.Fatal("ParseConfig accepted it")
			}
			golden(t, filepath.Join("testdata", "config", name+".err"), err.Error()+"\n")
		})
	}
}

// TestConfigMessagesMatchPolicy: the same mistake gets the same words in a
// gateway config as in the gateway section of a policy file, because both
// go through the one decoder.
func TestConfigMessagesMatchPolicy(t *testing.T) {
	tests := []struct {
		name, gateway, policy string
	}{
		{
			"typo'd key",
			"upstreams:\n  local:\n    modles: [a]\n",
			"gateway:\n  upstreams:\n    local:\n      modles: [a]\n",
		},
		{"list given as a string", "allow: github.com:443\n", "network:\n  allow: github.com:443\n"},
		{"duplicate key", "run_id: x\nallow: []\nallow: []\n", "network:\n  allow: []\n  allow: []\n"},
		{"second document", "allow: []\n---\n", "network: {}\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, gerr := ParseConfig("gateway.yaml", []byte(tt.gateway))
			_, _, perr := policy.Parse("agentbox.yaml", []byte(tt.policy))
			if gerr == nil || perr == nil {
				t.Fatalf("gateway: %v, policy: %v; want both refused", gerr, perr)
			}
			if g, p := afterField(gerr.Error()), afterField(perr.Error()); g != p {
				t.Errorf("the messages differ:\ngateway: %s\npolicy:  %s", gerr, perr)
			}
		})
	}
}

// afterField is a message without its "FILE:LINE: FIELD: " head.
func afterField(msg string) string {
	for _, sep := range []string{`: unknown key`, `: expected`, `: duplicate key`, `: a second`} {
		if i := strings.Index(msg, sep); i >= 0 {
			return msg[i+2:]
		}
	}
	return msg
}

func TestParseConfigGood(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join("testdata", "config", "good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		RunID: "standalone-1", Listen: "tcp:127.0.0.1:8787", TokenFile: "/run/secrets/agentbox-token",
		Upstreams: map[string]Upstream{
			"openai": {KeyFile: "/run/secrets/openai-key"},
			"local":  {URL: "http://127.0.0.1:8080/v1", Models: []string{"qwen2.5-coder"}},
		},
		Allow:   []string{"github.com:443", "*.npmjs.org:443"},
		LogFile: "/var/log/agentbox/gateway.jsonl",
		Limits: Limits{
			MaxConns: 32, IdleTimeout: Duration(2 * time.Minute), HeaderTimeout: Duration(5 * time.Second),
			MaxBufferedBytes: 128 << 20, BufferWait: Duration(time.Second), BodyTimeout: Duration(20 * time.Second),
			LogMaxBytes: 8 << 20, LogMaxLine: 2048, LogRepeatWindow: Duration(30 * time.Second),
		},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	// The struct round-trips through JSON, the form a child process gets.
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig("roundtrip.json", b)
	if err != nil {
		t.Fatalf("re-reading %s: %v", b, err)
	}
	if diff := cmp.Diff(cfg, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	if _, err := LoadConfig(filepath.Join("testdata", "config", "good.json")); err != nil {
		t.Errorf("good.json: %v", err)
	}
}

func TestTokenNeverSerialised(t *testing.T) {
	b, err := json.Marshal(Config{Token: "agentbox-gw-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret") {
		t.Errorf("the token was serialised: %s", b)
	}
}

func TestParseUpstreamFlag(t *testing.T) {
	n, u, err := ParseUpstreamFlag("openai=http://127.0.0.1:8080")
	if err != nil || n != "openai" || u != "http://127.0.0.1:8080" {
		t.Errorf("ParseUpstreamFlag = %q %q %v", n, u, err)
	}
	for _, bad := range []string{
		"openai", "=http://x", "openai=", "Open=http://x", "openai=file:///etc/passwd",
		"openai=http://user:pw@x", "openai=http://x/?key=1", "openai=http://127.1.2.3.4/",
	} {
		if _, _, err := ParseUpstreamFlag(bad); err == nil {
			t.Errorf("ParseUpstreamFlag(%q) accepted it", bad)
		}
	}
	var c Config
	c.SetUpstreamURL("openai", "http://127.0.0.1:8080")
	if c.Upstreams["openai"].URL != "http://127.0.0.1:8080" {
		t.Errorf("SetUpstreamURL: %+v", c.Upstreams)
	}
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tok")
	os.WriteFile(good, []byte("agentbox-gw-abc\n"), 0o600)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("two words\n"), 0o600)
	env := map[string]string{"TOK": " agentbox-gw-env ", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		cfg  Config
		want string // token, or "error"
	}{
		{Config{TokenFile: good}, "agentbox-gw-abc"},
		{Config{TokenEnv: "TOK"}, "agentbox-gw-env"},
		{Config{TokenFile: bad}, "error"},
		{Config{TokenFile: filepath.Join(dir, "absent")}, "error"},
		{Config{TokenEnv: "EMPTY"}, "error"},
		{Config{}, "error"},
	}
	for _, tt := range tests {
		c := tt.cfg
		err := c.LoadToken(getenv)
		got := c.Token
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("LoadToken(%+v) = %q (%v), want %q", tt.cfg, got, err, tt.want)
		}
	}
}

// TestLimitsDefaults: zero limits take the documented defaults, and the
// body budget follows a larger body cap.
func TestLimitsDefaults(t *testing.T) {
	l := Limits{}.withDefaults()
	want := Limits{
		MaxConns: DefaultMaxConns, IdleTimeout: Duration(DefaultIdleTimeout), HeaderTimeout: Duration(DefaultHeaderTimeout),
		MaxHeaderBytes: DefaultMaxHeaderBytes, MaxBodyBytes: DefaultMaxBodyBytes, DialTimeout: Duration(DefaultDialTimeout),
		MaxBufferedBytes: DefaultMaxBuffered, BufferWait: Duration(DefaultBufferWait), BodyTimeout: Duration(DefaultBodyTimeout),
		LogMaxBytes: DefaultLogMaxBytes, LogMaxLine: DefaultLogMaxLine, LogRepeatWindow: Duration(DefaultLogRepeat),
	}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if got := (Limits{MaxBodyBytes: 100 << 20}).withDefaults().MaxBufferedBytes; got != 200<<20 {
		t.Errorf("budget for a 100 MiB body cap: %d, want twice it", got)
	}
	c := Config{Limits: Limits{MaxBodyBytes: 100 << 20}}
	if err := c.Validate(); err != nil {
		t.Errorf("a larger body cap alone: %v", err)
	}
}
