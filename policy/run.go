package policy

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Run is the launch a plan is for: the values the launcher chooses before
// planning, none of them an effect. Nothing named here exists yet when
// Resolve runs; the launcher makes the run directory, starts the gateway
// with the token and leases the ids after planning, from the Plan.
type Run struct {
	// ID is the run id (RunIDPlaceholder for agentbox spec, which runs
	// nothing); "" for a plan of no run of agentbox's own (compose), which
	// then gets no cgroup of agentbox's.
	ID string
	// Dir is the run directory the run will have (RUN_ROOT/runs/ID); the
	// gateway's socket lies in it. "" for a plan of no run.
	Dir string
	// Bundle is the directory the launcher writes the bundle into; files
	// the plan binds from it (socket covers, files over an image root) are
	// named below it.
	Bundle string
	// GatewayToken is the per-run token the run's gateway will accept in
	// place of a key; the agent adapter puts it where the agent reads its
	// key. "" plans no gateway of agentbox's own (the sandbox then has no
	// way out at all); a target other than TargetRuntime ignores it.
	GatewayToken string
	// Target is what will run the sandbox; "" is TargetRuntime.
	Target Target
	// GatewayPort is, for TargetUser, the free host loopback port the
	// launcher chose for the run's gateway (Plan.GatewayPort); other
	// targets ignore it.
	GatewayPort int
}

// Target is what runs the sandbox a plan is for. Resolve branches on it
// wherever a decision depends on who runs the sandbox: whether agentbox
// looks up and vets the runtime, binds its init and the run's gateway
// socket, maps the ids itself, and whether the host's cgroup and AppArmor
// facts apply. Targets still to come (containerd through its client, a
// dedicated user with no OCI runtime, Kubernetes) are values of their own.
type Target string

// Targets.
const (
	// TargetRuntime: agentbox runs the bundle with an OCI runtime CLI
	// (runc, crun, runsc) on this host, with its own init, gateway and id
	// map. The zero Target is this one.
	TargetRuntime Target = "runtime"
	// TargetEngine: a container engine (Docker, Podman) runs the sandbox
	// from a compose project. The engine brings the runtime (named as
	// given, neither looked up nor vetted here), its own init, and applies
	// the limits through its daemon; the gateway is a service of the
	// project; ids are host ids (IDEngine); whoever starts the project loads
	// agentbox's AppArmor profile, which the project carries; no terminal.
	TargetEngine Target = "engine"
)

func (t Target) orDefault() Target {
	if t == "" {
		return TargetRuntime
	}
	return t
}

// RunIDPlaceholder stands for the run id in a plan made for no run
// (agentbox spec shows where a run's cgroup and files would go).
const RunIDPlaceholder = "RUN_ID"

// GatewayTokenPlaceholder stands for the per-run gateway token in a plan
// made for no run: agentbox spec shows where a run puts its token.
const GatewayTokenPlaceholder = "PER-RUN-TOKEN"

// RunDir is the run directory of run id below the run root, as Run.Dir
// names it (engine.CreateRunDir makes it there).
func RunDir(runRoot, id string) string { return filepath.Join(runRoot, "runs", id) }

// The run's gateway socket lies at GATEWAY_SOCKET_DIR/GATEWAY_SOCKET_NAME
// of its run directory (netpolicy.StartRun listens there; the launcher
// checks that it did).
const (
	GatewaySocketDir  = "gateway"
	GatewaySocketName = "gateway.sock"
)

// GatewayPort is the sandbox's loopback port where agentbox-init relays to
// the gateway's socket (netpolicy.DefaultPort), and GatewayURL the base
// URL the agent adapter points agents at.
const GatewayPort = 8787

// GatewayURL is where agents reach the gateway inside the sandbox.
var GatewayURL = "http://127.0.0.1:" + strconv.Itoa(GatewayPort)

// checkRun refuses a Run that cannot be planned: an unknown target, or a
// gateway with no run directory for its socket.
func checkRun(run Run) error {
	switch run.Target.orDefault() {
	case TargetRuntime:
		if run.GatewayToken != "" && run.Dir == "" {
			return &InputError{Field: "run", Msg: "a gateway token with no run directory for the gateway's socket", Fix: "plan with the run directory (RunDir)"}
		}
	case TargetEngine, TargetKubernetes:
	case TargetUser:
		if run.GatewayToken != "" && (run.Dir == "" || run.GatewayPort <= 0 || run.GatewayPort > 65535) {
			return &InputError{Field: "run", Msg: "a gateway token with no run directory or no loopback port for the gateway", Fix: "plan with the run directory (RunDir) and Run.GatewayPort"}
		}
	default:
		return &InputError{Field: "target", Msg: fmt.Sprintf("unknown target %q", run.Target), Fix: fmt.Sprintf("plan for %s, %s, %s or %s", TargetRuntime, TargetEngine, TargetKubernetes, TargetUser)}
	}
	return nil
}
