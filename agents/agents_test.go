package agents

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var gw = Gateway{URL: "http://127.0.0.1:8787", Token: "agentbox-gw-test"}

func TestDetect(t *testing.T) {
	for argv0, want := range map[string]string{
		"codex": "codex", "/usr/local/bin/codex": "codex", "claude": "claude", "/opt/node/bin/claude": "claude",
		"cli.js": "generic", "gemini": "gemini", "goose": "goose", "aider": "aider", "opencode": "opencode",
		"opencode.exe": "opencode", "bash": "generic", "codex-wrapper": "generic", "": "generic",
	} {
		if got := Detect(argv0).Name(); got != want {
			t.Errorf("Detect(%q) = %s, want %s", argv0, got, want)
		}
	}
}

func TestCodexLaunch(t *testing.T) {
	l, err := Prepare([]string{"codex", "exec", "--skip-git-repo-check", "fix the tests"}, nil, gw)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"codex",
		"-c", `model_provider="agentbox"`,
		"-c", `model_providers.agentbox.name="agentbox gateway"`,
		"-c", `model_providers.agentbox.base_url="http://127.0.0.1:8787/openai/v1"`,
		"-c", `model_providers.agentbox.env_key="AGENTBOX_GATEWAY_TOKEN"`,
		"-c", `model_providers.agentbox.wire_api="responses"`,
		"-c", "check_for_update_on_startup=false",
		"-c", "analytics.enabled=false",
		"-c", "feedback.enabled=false",
		"-c", `otel.exporter="none"`,
		"-c", `otel.trace_exporter="none"`,
		"-c", `otel.metrics_exporter="none"`,
		"exec", "--skip-git-repo-check", "fix the tests",
	}
	if diff := cmp.Diff(want, l.Argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if l.Env[TokenEnv] != gw.Token || l.Env["HTTPS_PROXY"] != gw.URL || l.Env["NO_PROXY"] != NoProxy {
		t.Errorf("env %v", l.Env)
	}
	for _, a := range l.Argv {
		if strings.Contains(a, gw.Token) {
			t.Errorf("the token is in argv: %q", a)
		}
	}
	if _, ok := l.Env["OPENAI_API_KEY"]; ok {
		t.Error("codex got OPENAI_API_KEY; its provider reads the token from AGENTBOX_GATEWAY_TOKEN")
	}
}

func TestClaudeLaunch(t *testing.T) {
	argv := []string{"claude", "-p", "--dangerously-skip-permissions", "hello"}
	l, err := Prepare(argv, nil, Gateway{URL: "http://127.0.0.1:8787/", Token: gw.Token})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(argv, l.Argv); diff != "" {
		t.Errorf("claude argv changed (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{
		"ANTHROPIC_BASE_URL": "http://127.0.0.1:8787/anthropic", "ANTHROPIC_AUTH_TOKEN": gw.Token,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1",
		"HTTP_PROXY": "http://127.0.0.1:8787", "NO_PROXY": "127.0.0.1,::1,localhost",
	} {
		if l.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, l.Env[k], v)
		}
	}
	if _, ok := l.Env["ANTHROPIC_API_KEY"]; ok {
		t.Error("claude got both ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN")
	}
}

func TestGenericLaunch(t *testing.T) {
	l, err := Prepare([]string{"/bin/sh", "-c", "curl https://example.com"}, nil, gw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"HTTP_PROXY": gw.URL, "HTTPS_PROXY": gw.URL, "ALL_PROXY": gw.URL,
		"http_proxy": gw.URL, "https_proxy": gw.URL, "all_proxy": gw.URL,
		"NO_PROXY": NoProxy, "no_proxy": NoProxy, URLEnv: gw.URL, TokenEnv: gw.Token,
		"OPENAI_BASE_URL": gw.URL + "/openai/v1", "OPENAI_API_BASE": gw.URL + "/openai/v1", "OPENAI_API_KEY": gw.Token,
		"ANTHROPIC_BASE_URL": gw.URL + "/anthropic", "ANTHROPIC_API_KEY": gw.Token,
	}
	if diff := cmp.Diff(want, l.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if l.Agent != "generic" || l.Permission.Mode != "unknown" {
		t.Errorf("launch %+v", l)
	}
}

// gemini-cli reaches the gateway's /google route: @google/genai's base URL
// from GOOGLE_GEMINI_BASE_URL, the token as GEMINI_API_KEY (sent as
// x-goog-api-key); no OpenAI or Anthropic variable, and argv unchanged.
func TestGeminiLaunch(t *testing.T) {
	argv := []string{"gemini", "--yolo", "-p", "hi"}
	l, err := Prepare(argv, nil, gw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(argv, l.Argv); diff != "" {
		t.Errorf("argv changed (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{
		"GOOGLE_GEMINI_BASE_URL": gw.URL + "/google", "GEMINI_API_KEY": gw.Token, "GEMINI_TELEMETRY_ENABLED": "false",
		"HTTPS_PROXY": gw.URL, "NO_PROXY": NoProxy, TokenEnv: gw.Token,
	} {
		if l.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, l.Env[k], v)
		}
	}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"} {
		if _, ok := l.Env[k]; ok {
			t.Errorf("gemini got %s", k)
		}
	}
	if diff := cmp.Diff([]string{TokenEnv, "GEMINI_API_KEY"}, l.TokenVars()); diff != "" {
		t.Errorf("token vars (-want +got):\n%s", diff)
	}
}

// goose's openai provider joins OPENAI_HOST (an origin) and
// OPENAI_BASE_PATH; its anthropic provider reads ANTHROPIC_HOST. The
// generic variables stay for the rest.
func TestGooseLaunch(t *testing.T) {
	l, err := Prepare([]string{"goose", "run", "-t", "hi"}, nil, gw)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"OPENAI_HOST": gw.URL + "/openai", "OPENAI_BASE_PATH": "v1/chat/completions", "OPENAI_API_KEY": gw.Token,
		"ANTHROPIC_HOST": gw.URL + "/anthropic", "ANTHROPIC_API_KEY": gw.Token, "OPENAI_BASE_URL": gw.URL + "/openai/v1",
	} {
		if l.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, l.Env[k], v)
		}
	}
	if l.Agent != "goose" || !l.Permission.AutoApprove {
		t.Errorf("launch %+v", l)
	}
}

func TestPrepareErrors(t *testing.T) {
	for _, g := range []Gateway{
		{URL: "", Token: "t"},
		{URL: "https://127.0.0.1:1", Token: "t"},
		{URL: "http://127.0.0.1:1/openai", Token: "t"},
		{URL: "http://127.0.0.1:1", Token: ""},
	} {
		if _, err := Prepare([]string{"codex"}, nil, g); err == nil {
			t.Errorf("Prepare accepted gateway %+v", g)
		}
	}
	if _, err := Prepare(nil, nil, gw); err == nil {
		t.Error("Prepare accepted an empty command")
	}
}

// TestPermission: how each agent's command line spells its permission mode.
func TestPermission(t *testing.T) {
	tests := []struct {
		argv []string
		env  map[string]string
		want Permission
	}{
		{[]string{"codex"}, nil, Permission{Mode: "approval=on-request sandbox=default", Source: "default"}},
		{[]string{"codex", "exec", "hi"}, nil, Permission{Mode: "approval=never sandbox=read-only", AutoApprove: true, Source: "codex exec"}},
		{[]string{"codex", "-m", "exec", "hi"}, nil, Permission{Mode: "approval=on-request sandbox=default", Source: "default"}},
		{[]string{"codex", "e", "--full-auto", "hi"}, nil, Permission{Mode: "approval=on-request sandbox=workspace-write", AutoApprove: true, Source: "--full-auto"}},
		{[]string{"codex", "-a", "untrusted", "-s", "workspace-write"}, nil, Permission{Mode: "approval=untrusted sandbox=workspace-write", Source: "-s"}},
		{[]string{"codex", "--ask-for-approval=never"}, nil, Permission{Mode: "approval=never sandbox=default", AutoApprove: true, Source: "--ask-for-approval"}},
		{[]string{"codex", "-c", `approval_policy="on-failure"`}, nil, Permission{Mode: "approval=on-failure sandbox=default", AutoApprove: true, Source: "-c approval_policy"}},
		{[]string{"codex", "-c", "sandbox_mode='danger-full-access'"}, nil, Permission{
			Mode: "approval=on-request sandbox=danger-full-access", Source: "-c sandbox_mode",
			Note: "codex's own sandbox is off; agentbox's sandbox is the only boundary",
		}},
		{[]string{"codex", "exec", "--yolo", "x"}, nil, Permission{
			Mode: "approval=never sandbox=danger-full-access", AutoApprove: true, Source: "--yolo",
			Note: "codex runs every command without asking and without its own sandbox; agentbox's sandbox is the only boundary",
		}},
		{[]string{"codex", "exec", "--", "--yolo"}, nil, Permission{Mode: "approval=never sandbox=read-only", AutoApprove: true, Source: "codex exec"}},
		{[]string{"claude"}, nil, Permission{Mode: "default", Source: "default"}},
		{[]string{"claude", "-p", "--dangerously-skip-permissions", "x"}, nil, Permission{Mode: "bypassPermissions", AutoApprove: true, Source: "--dangerously-skip-permissions"}},
		{[]string{"claude", "--permission-mode", "bypassPermissions"}, nil, Permission{Mode: "bypassPermissions", AutoApprove: true, Source: "--permission-mode"}},
		{[]string{"claude", "--permission-mode=acceptEdits"}, nil, Permission{
			Mode: "acceptEdits", Source: "--permission-mode",
			Note: "file edits are applied without asking; commands still ask",
		}},
		{[]string{"claude", "--permission-mode", "plan"}, nil, Permission{Mode: "plan", Source: "--permission-mode"}},
		{[]string{"claude", "--allow-dangerously-skip-permissions"}, nil, Permission{
			Mode: "default", Source: "default",
			Note: "--allow-dangerously-skip-permissions lets the session switch to bypassPermissions",
		}},
		{[]string{"gemini", "-y"}, nil, Permission{Mode: "yolo", AutoApprove: true, Source: "-y", Note: geminiUntrusted}},
		{[]string{"gemini", "--approval-mode=yolo"}, nil, Permission{Mode: "yolo", AutoApprove: true, Source: "--approval-mode", Note: geminiUntrusted}},
		{[]string{"gemini", "--approval-mode", "plan"}, nil, Permission{Mode: "plan", Source: "--approval-mode"}},
		{[]string{"gemini"}, map[string]string{"GEMINI_YOLO": "1"}, Permission{Mode: "default", Source: "default"}}, // no such variable in gemini-cli
		{[]string{"gemini", "--approval-mode", "auto_edit"}, nil, Permission{
			Mode: "auto_edit", Source: "--approval-mode",
			Note: "file edits are applied without asking; commands still ask",
		}},
		{[]string{"gemini"}, nil, Permission{Mode: "default", Source: "default"}},
		{[]string{"goose", "run"}, nil, Permission{Mode: "auto", AutoApprove: true, Source: "default"}},
		{[]string{"goose", "run"}, map[string]string{"GOOSE_MODE": "approve"}, Permission{Mode: "approve", Source: "GOOSE_MODE"}},
		{[]string{"goose", "run"}, map[string]string{"GOOSE_MODE": "smart_approve"}, Permission{
			Mode: "smart_approve", Source: "GOOSE_MODE", Note: "goose approves the actions it rates low-risk without asking",
		}},
		{[]string{"aider", "--yes"}, nil, Permission{Mode: "yes-always", AutoApprove: true, Source: "--yes"}}, // argparse takes the prefix
		{[]string{"aider", "--yes-always"}, nil, Permission{Mode: "yes-always", AutoApprove: true, Source: "--yes-always"}},
		{[]string{"aider"}, nil, Permission{Mode: "default", Source: "default"}},
		{[]string{"opencode", "run", "--dangerously-skip-permissions", "x"}, nil, Permission{Mode: "skip-permissions", AutoApprove: true, Source: "--dangerously-skip-permissions"}},
		{[]string{"opencode", "run"}, map[string]string{"OPENCODE_DANGEROUSLY_SKIP_PERMISSIONS": "true"}, Permission{Mode: "skip-permissions", AutoApprove: true, Source: "OPENCODE_DANGEROUSLY_SKIP_PERMISSIONS"}},
		{[]string{"opencode", "run"}, nil, Permission{
			Mode: "unknown", Source: "default",
			Note: "opencode's permission config decides, and the command line does not show it",
		}},
	}
	for _, tt := range tests {
		l, err := Prepare(tt.argv, tt.env, gw)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, l.Permission); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.argv, diff)
		}
	}
}

func TestTokenVars(t *testing.T) {
	for argv0, want := range map[string][]string{
		"codex":  {TokenEnv},
		"claude": {"AGENTBOX_GATEWAY_TOKEN", "ANTHROPIC_AUTH_TOKEN"},
		"bash":   {"AGENTBOX_GATEWAY_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"},
	} {
		l, err := Prepare([]string{argv0}, nil, gw)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, l.TokenVars()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", argv0, diff)
		}
	}
}

func TestPermissionOf(t *testing.T) {
	tests := []struct {
		argv  []string
		env   map[string]string
		agent string
		auto  bool
		known bool
	}{
		{[]string{"/usr/bin/codex", "exec", "x"}, nil, "codex", true, true},
		{[]string{"codex", "--full-auto"}, nil, "codex", true, true},
		{[]string{"claude"}, map[string]string{"CLAUDE_CODE_DANGEROUSLY_SKIP_PERMISSIONS": "1"}, "claude", true, true},
		{[]string{"claude"}, nil, "claude", false, true},
		{[]string{"aider"}, map[string]string{"AIDER_YES_ALWAYS": "true"}, "aider", true, true},
		{[]string{"cline", "--yolo"}, nil, "cline", true, true},
		{[]string{"make", "-y"}, nil, "generic", false, false},
	}
	for _, tt := range tests {
		agent, p, known := PermissionOf(tt.argv, tt.env)
		if agent != tt.agent || p.AutoApprove != tt.auto || known != tt.known {
			t.Errorf("PermissionOf(%q, %v) = %s %+v %v, want %s auto=%v known=%v", tt.argv, tt.env, agent, p, known, tt.agent, tt.auto, tt.known)
		}
	}
	if a, ok := EnvAutoApprove("goose_mode", "Auto"); !ok || a != "goose" {
		t.Errorf("EnvAutoApprove(goose_mode=Auto) = %s, %v", a, ok)
	}
	if _, ok := EnvAutoApprove("GOOSE_MODE", "approve"); ok {
		t.Error("GOOSE_MODE=approve is not auto-approve")
	}
}
