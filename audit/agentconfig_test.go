package audit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanAgentConfigs(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ws/.claude/settings.json":              `{"permissions":{"defaultMode":"bypassPermissions"}}`,
		"ws/.codex/config.toml":                 "# approval_policy = \"never\"\nmodel = \"x\"\n[profiles.fast]\napproval_policy = \"never\"\nsandbox_mode = 'danger-full-access'\n",
		"ws/opencode.json":                      `{"permission":{"edit":"allow","bash":"ask"}}`,
		"ws/.aider.conf.yml":                    "yes-always: true\n",
		"home/.config/goose/config.yaml":        "GOOSE_MODE: auto\n",
		"home/.cline/data/globalState.json":     `{"yoloModeToggled":true}`,
		"home/.claude/settings.local.json":      `{"permissions":{"defaultMode":"default"}}`,
		"quiet/.claude/settings.json":           `{"permissions":{"allow":["Bash(ls)"]}}`,
		"single/.config/opencode/opencode.json": `{"permission":"allow"}`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mounts := []Mount{
		{Type: "bind", Source: filepath.Join(dir, "ws"), Destination: "/workspace"},
		{Type: "bind", Source: filepath.Join(dir, "home"), Destination: "/root", ReadOnly: true},
		{Type: "bind", Source: filepath.Join(dir, "home/.claude"), Destination: "/root/.claude"},
		{Type: "bind", Source: filepath.Join(dir, "quiet"), Destination: "/q"},
		{Type: "bind", Source: filepath.Join(dir, "single/.config/opencode/opencode.json"), Destination: "/o.json"},
		{Type: "volume", Source: "ws", Destination: "/v"},
	}
	var got []string
	for _, c := range ScanAgentConfigs(mounts) {
		rel, _ := filepath.Rel(dir, c.Path)
		got = append(got, c.Agent+" "+rel+" "+c.AutoApprove)
	}
	want := []string{
		"claude ws/.claude/settings.json permissions.defaultMode=bypassPermissions",
		"codex ws/.codex/config.toml approval_policy=never, sandbox_mode=danger-full-access",
		"aider ws/.aider.conf.yml yes-always=true",
		"opencode ws/opencode.json permission.edit=allow",
		"claude home/.claude/settings.local.json ",
		"goose home/.config/goose/config.yaml GOOSE_MODE=auto",
		"cline home/.cline/data/globalState.json yoloModeToggled=true",
		"claude quiet/.claude/settings.json ",
		"opencode single/.config/opencode/opencode.json permission=allow",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configs (-want +got):\n%s", diff)
	}
	c := hardened()
	c.AgentConfigs = ScanAgentConfigs(mounts)
	if n := len(checkAutoApprove(&c, &Options{})); n != 7 {
		t.Errorf("auto-approve findings = %d, want 7", n)
	}
}
