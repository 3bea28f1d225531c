package compose

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"go.yaml.in/yaml/v3"

	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// PlanArgv is the command planning resolves for a compose project. The
// agent's real command lives in its image, which the host cannot look
// into, so the plan resolves a command every host has and Render takes the
// agent's command from Options; the plan's Command is not used.
var PlanArgv = []string{"/bin/sh"}

// PlanHost adapts captured host facts to a sandbox that a container engine
// runs, not agentbox:
//
//   - no agentbox-init: the engine starts the command (with its own init);
//   - limits can be applied: the engine's daemon applies them;
//   - no user namespace: the agent's ids are host ids (Docker without
//     userns-remap), so MapIDs maps each id to itself;
//   - the OCI runtime is the engine's (EngineRuntime): agentbox runs none,
//     so one that is not installed on this host is not an error;
//   - no gateway socket: the gateway is a service of the project;
//   - where AppArmor is enabled, agentbox's profile is used: the project
//     carries it, and whoever starts the project loads it first.
func PlanHost(h policy.Host) policy.Host {
	h.InitPath, h.GatewaySocket = "", ""
	h.AppArmorReady = h.AppArmor
	h.CanLimit, h.LimitReason = true, ""
	h.RootlessSingle = false
	h.Terminal = false
	h.MapIDs = identityMap
	h.EngineRuntime = true
	return h
}

func identityMap(req policy.IDRequest) (uids, gids []specs.LinuxIDMapping, err error) {
	uid, gid := req.UID, req.GID
	if req.KeepUID != nil {
		uid = *req.KeepUID
	}
	if req.KeepGID != nil {
		gid = *req.KeepGID
	}
	return []specs.LinuxIDMapping{{ContainerID: req.UID, HostID: uid, Size: 1}},
		[]specs.LinuxIDMapping{{ContainerID: req.GID, HostID: gid, Size: 1}}, nil
}

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
