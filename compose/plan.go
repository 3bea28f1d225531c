package compose

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// PlanArgv is the command planning resolves for a compose project. The
// agent's real command lives in its image, which the host cannot look
// into, so the plan resolves a command every host has and Render takes the
// agent's command from Options; the plan's Command is not used.
var PlanArgv = []string{"/bin/sh"}

// PlanRun is what a compose project's plan is for: a sandbox that a
// container engine runs from the project (policy.TargetEngine), not a run
// of agentbox's own. Resolve branches on that target itself: no
// agentbox-init, limits the engine's daemon applies, host ids, the
// engine's runtime, no gateway socket (the gateway is a service of the
// project), agentbox's AppArmor profile where AppArmor is enabled (the
// project carries it, and whoever starts the project loads it first).
func PlanRun() policy.Run { return policy.Run{Target: policy.TargetEngine} }

// ResolveOutDir makes dir absolute and resolves the symlinks of the part of
// it that exists, so that it compares with the plan's resolved workspace.
func ResolveOutDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || p == "/" {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// ExistingToken returns the gateway key of the project already in dir, so
// that rendering again keeps it; "" when there is none.
func ExistingToken(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ComposeFile))
	if err != nil {
		return ""
	}
	var doc struct {
		Services map[string]struct {
			Environment yaml.Node `yaml:"environment"`
		} `yaml:"services"`
	}
	if yaml.Unmarshal(b, &doc) != nil {
		return ""
	}
	env := doc.Services[AgentService].Environment
	var v string
	switch env.Kind {
	case yaml.MappingNode:
		if n := mapValue(&env, KeyEnv); n != nil {
			v = n.Value
		}
	case yaml.SequenceNode:
		for _, n := range env.Content {
			if val, ok := strings.CutPrefix(n.Value, KeyEnv+"="); ok {
				v = val
			}
		}
	default: // no environment, or not one compose accepts
	}
	if strings.HasPrefix(v, netpolicy.TokenPrefix) && len(v) > len(netpolicy.TokenPrefix)+16 {
		return v
	}
	return ""
}
