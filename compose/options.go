package compose

import (
	"fmt"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Names used in the rendered project.
const (
	// AgentService and GatewayService are the two services.
	AgentService   = "agent"
	GatewayService = "gateway"
	// SandboxNetwork is internal; EgressNetwork is the gateway's way out.
	SandboxNetwork = "sandbox"
	EgressNetwork  = "egress"
	// GatewayPort is where the gateway listens on both networks.
	GatewayPort = 8080
	// KeyEnv holds the per-sandbox gateway key in both services'
	// environment, beside the variables the agent's adapter sets.
	KeyEnv = "AGENT_GATEWAY_KEY"
	// GatewayImageRepo is the repository of the locally built gateway image;
	// its tag is derived from the agentbox binary's digest.
	GatewayImageRepo = "agentbox/gateway"
	// GatewayUID and GatewayGID are the gateway's ids when Options leaves
	// them zero (the conventional "nonroot" ids of distroless images).
	GatewayUID = 65532
	GatewayGID = 65532
	// GatewayMemory and GatewayPids bound the gateway container.
	GatewayMemory = 256 << 20
	GatewayPids   = 256
)

// UserNSReason is why a compose project runs without a user namespace where
// the engine gives none, the residual both services accept by label
// (policy.AcceptLabel): compose has no portable way to ask for one.
const UserNSReason = "compose cannot ask every engine for a user namespace: the Docker daemon remaps users only when it runs with userns-remap (agentbox doctor says how to turn it on), Podman with userns_mode keep-id or auto; the agent runs as an unprivileged uid with no capabilities either way"

// Files of the rendered project, relative to the output directory.
const (
	ComposeFile  = "compose.yaml"
	SeccompFile  = "agentbox-seccomp.json"
	GatewayFile  = "gateway.yaml"
	AppArmorFile = "agentbox-default.apparmor"
	IgnoreFile   = ".gitignore"
	BuildDir     = "gateway"
	SecretsDir   = "secrets"
)

// In-container paths of the gateway.
const (
	gatewayConfigPath = "/etc/agentbox/gateway.yaml"
	secretsPath       = "/run/secrets"
)

// keyRoute is the model route whose real key an agent needs.
type keyRoute struct {
	Route string
}

// keyRoutes are the agents whose key the project asks for, by adapter name
// (agents.Detect). Other commands reach the gateway's routes too, but get no
// key file; add one to gateway.yaml and compose.yaml as for these.
var keyRoutes = map[string]keyRoute{
	"codex":  {Route: "openai"},
	"claude": {Route: "anthropic"},
}

// AgentNames lists the agents --agent knows, sorted: those whose real key
// the project carries to the gateway.
func AgentNames() []string {
	names := make([]string, 0, len(keyRoutes))
	for n := range keyRoutes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AgentCommand returns the command of a known agent: its name.
func AgentCommand(name string) ([]string, error) {
	if _, ok := keyRoutes[name]; !ok {
		return nil, &InputError{
			Field: "--agent", Msg: fmt.Sprintf("unknown agent %q", name),
			Fix: "use one of " + strings.Join(AgentNames(), ", ") + ", or give any command after --",
		}
	}
	return []string{name}, nil
}

// Options is what a compose project needs beyond the plan.
type Options struct {
	// Command is the agent's command inside the image. The agents package
	// adapts it (agents.Prepare): codex and claude get their gateway
	// settings, any other command the generic ones. It must not be empty.
	Command []string
	// Image is the agent's image. It must not be empty.
	Image string
	// OutDir is the absolute directory the project is written to. The
	// seccomp profile is referenced by its absolute path there, because
	// docker-compose and docker compose open it relative to their working
	// directory, not the project's.
	OutDir string
	// SeccompDir is the directory compose.yaml names the seccomp profile
	// in. Empty means OutDir; the self-audit (package compose/check) points
	// it at a staging copy, since the profile is not in OutDir yet.
	SeccompDir string
	// Token is the per-sandbox gateway key (netpolicy.NewToken). It must
	// start with netpolicy.TokenPrefix.
	Token string
	// GatewayBinary is the static agentbox binary for the gateway image.
	GatewayBinary []byte
	// CABundle is the PEM bundle the gateway trusts for its upstreams.
	CABundle []byte
	// GatewayUID and GatewayGID are the gateway's ids; zero means GatewayUID
	// and GatewayGID. The secret files are created owned by them.
	GatewayUID, GatewayGID uint32
	// Arch is the seccomp architecture; empty means the native one.
	Arch specs.Arch
}

// InputError is bad input to the renderer: a flag or plan field that cannot
// be translated into a compose project. The CLI maps it to exit code 2.
type InputError struct {
	Field string
	Msg   string
	Fix   string
}

// UsageError marks the error as bad input (exit 2) to launcher.KindOf,
// which does not link this package.
func (e *InputError) UsageError() bool { return true }

func (e *InputError) Error() string {
	s := e.Msg
	if e.Field != "" {
		s = e.Field + ": " + s
	}
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

func (o Options) gatewayIDs() (uint32, uint32) {
	uid, gid := o.GatewayUID, o.GatewayGID
	if uid == 0 {
		uid = GatewayUID
	}
	if gid == 0 {
		gid = GatewayGID
	}
	return uid, gid
}

func (o Options) seccompDir() string {
	if o.SeccompDir != "" {
		return o.SeccompDir
	}
	return o.OutDir
}

func gatewayURL() string { return fmt.Sprintf("http://%s:%d", GatewayService, GatewayPort) }
