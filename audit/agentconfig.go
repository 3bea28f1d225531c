package audit

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// agentFile is an agent settings file, relative to a bound directory (a
// workspace or a home), and the reader that finds auto-approve in it.
type agentFile struct {
	agent, rel string
	read       func(b []byte) string
}

var agentFiles = []agentFile{
	{"claude", ".claude/settings.json", claudeSettings},
	{"claude", ".claude/settings.local.json", claudeSettings},
	{"codex", ".codex/config.toml", codexConfig},
	{"goose", ".config/goose/config.yaml", gooseConfig},
	{"aider", ".aider.conf.yml", aiderConfig},
	{"opencode", "opencode.json", opencodeConfig},
	{"opencode", ".config/opencode/opencode.json", opencodeConfig},
	{"cline", ".cline/data/globalState.json", clineState},
}

// maxConfigSize bounds what is read of one settings file.
const maxConfigSize = 1 << 20

// ScanAgentConfigs reads the agent settings files behind the host binds of
// mounts (a bound directory at its known relative paths, a bound file by its
// name) and returns those found. Unreadable files are skipped: this host may
// not be the container's host.
func ScanAgentConfigs(mounts []Mount) []AgentConfig {
	var out []AgentConfig
	seen := map[string]bool{}
	for _, m := range mounts {
		if !isHostMount(m) {
			continue
		}
		// One stat spares the opens that cannot succeed: nothing lies
		// below a path that is missing or unreadable, or below one that
		// is not a directory, which can only be a settings file itself.
		host := m.hostPath()
		fi, err := os.Stat(host)
		if err != nil {
			continue
		}
		for _, p := range candidates(host) {
			if seen[p.path] || !fi.IsDir() && p.path != filepath.Clean(host) {
				continue
			}
			seen[p.path] = true
			if b, ok := readSmall(p.path); ok {
				out = append(out, AgentConfig{Agent: p.file.agent, Path: p.path, AutoApprove: p.file.read(b)})
			}
		}
	}
	return out
}

type candidate struct {
	path string
	file agentFile
}

// candidates lists the settings files a bind of p may expose: p may be the
// directory holding a file's whole relative path, a directory part of that
// path (a bind of ~/.claude), or the file itself.
func candidates(p string) []candidate {
	var out []candidate
	for _, f := range agentFiles {
		parts := strings.Split(f.rel, "/")
		for i := 0; i <= len(parts); i++ {
			if i > 0 && !strings.HasSuffix(p, "/"+strings.Join(parts[:i], "/")) {
				continue
			}
			out = append(out, candidate{filepath.Join(append([]string{p}, parts[i:]...)...), f})
		}
	}
	return out
}

func readSmall(p string) ([]byte, bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfigSize))
	return b, err == nil
}

func claudeSettings(b []byte) string {
	var s struct {
		Permissions struct {
			DefaultMode string `json:"defaultMode"`
		} `json:"permissions"`
	}
	if json.Unmarshal(b, &s) == nil && strings.EqualFold(s.Permissions.DefaultMode, "bypassPermissions") {
		return "permissions.defaultMode=bypassPermissions"
	}
	return ""
}

var (
	codexApproval = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*approval_policy\s*=\s*["']never["']`) })
	codexSandbox  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\s*sandbox_mode\s*=\s*["']danger-full-access["']`)
	})
)

func codexConfig(b []byte) string {
	var hits []string
	if codexApproval().Match(b) {
		hits = append(hits, "approval_policy=never")
	}
	if codexSandbox().Match(b) {
		hits = append(hits, "sandbox_mode=danger-full-access")
	}
	return strings.Join(hits, ", ")
}

func gooseConfig(b []byte) string {
	var s map[string]any
	if yaml.Unmarshal(b, &s) == nil {
		if v, ok := s["GOOSE_MODE"].(string); ok && strings.EqualFold(v, "auto") {
			return "GOOSE_MODE=auto"
		}
	}
	return ""
}

func aiderConfig(b []byte) string {
	var s map[string]any
	if yaml.Unmarshal(b, &s) == nil {
		if v, ok := s["yes-always"].(bool); ok && v {
			return "yes-always=true"
		}
	}
	return ""
}

// opencodeConfig reads "permission": "allow", or an edit/bash/"*" entry set
// to "allow".
func opencodeConfig(b []byte) string {
	var s struct {
		Permission json.RawMessage `json:"permission"`
	}
	if json.Unmarshal(b, &s) != nil || len(s.Permission) == 0 {
		return ""
	}
	var all string
	if json.Unmarshal(s.Permission, &all) == nil && all == "allow" {
		return "permission=allow"
	}
	var each map[string]any
	if json.Unmarshal(s.Permission, &each) != nil {
		return ""
	}
	var hits []string
	for _, k := range []string{"*", "bash", "edit"} {
		if v, ok := each[k].(string); ok && v == "allow" {
			hits = append(hits, "permission."+k+"=allow")
		}
	}
	return strings.Join(hits, ", ")
}

func clineState(b []byte) string {
	var s struct {
		Yolo bool `json:"yoloModeToggled"`
		Auto struct {
			Enabled bool `json:"enabled"`
			Actions struct {
				ExecuteAll bool `json:"executeAllCommands"`
			} `json:"actions"`
		} `json:"autoApprovalSettings"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	switch {
	case s.Yolo:
		return "yoloModeToggled=true"
	case s.Auto.Enabled && s.Auto.Actions.ExecuteAll:
		return "autoApprovalSettings.actions.executeAllCommands=true"
	}
	return ""
}
