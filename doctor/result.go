package doctor

import "github.com/agentbox/agentbox/ledger"

// Status is the outcome of one check.
type Status string

// The statuses, from best to worst. UNKNOWN means the check could not decide.
const (
	Pass    Status = "PASS"
	Warn    Status = "WARN"
	Fail    Status = "FAIL"
	Unknown Status = "UNKNOWN"
)

// The boundary layers a check can decide (Result.Layer). A result without a
// layer is host hygiene: it is reported, never blocks and is no residual.
const (
	LayerUserNS   = "user-namespace"
	LayerSeccomp  = "seccomp"
	LayerMAC      = "mac"
	LayerLimits   = "cgroup-limits"
	LayerRuntime  = "runtime"
	LayerSelfTest = "self-test"
	// LayerDarwinUser is macOS's dedicated account and its pf fence
	// (darwin.go); listed only where a check decides it.
	LayerDarwinUser = "darwin-user"
)

// layerOrder is the order in which Report.Layers lists the layers.
var layerOrder = []string{LayerUserNS, LayerSeccomp, LayerMAC, LayerLimits, LayerRuntime, LayerSelfTest, LayerDarwinUser}

// Result is one check's answer about one subject.
type Result struct {
	// ID is stable kebab-case ("userns-create"); a CVE check names its
	// runtime and CVE ("runc-CVE-2024-21626").
	ID     string `json:"id"`
	Status Status `json:"status"`
	// Detail says what was found, in words.
	Detail string `json:"detail"`
	// Fix is the exact line that fixes a WARN, FAIL or UNKNOWN (a command
	// where there is one); empty on PASS.
	Fix string `json:"fix,omitempty"`
	// Layer is the boundary layer this result decides, or "" for host
	// hygiene.
	Layer string `json:"layer,omitempty"`
	// Residual is the residual code a WARN stands for when it is not ID:
	// the code the planner records for the same weakness
	// ("lsm-unavailable", "no-resource-limits", "rootless-single-id").
	Residual string `json:"residual,omitempty"`
}

// Blocks reports whether this result alone means the host cannot provide
// the boundary: every FAIL, and an UNKNOWN on a check that decides a layer.
func (r Result) Blocks() bool {
	return r.Status == Fail || r.Status == Unknown && r.Layer != ""
}

// residualCode is the code under which a WARN is recorded as a residual.
func (r Result) residualCode() string {
	if r.Residual != "" {
		return r.Residual
	}
	return r.ID
}

// Layer says whether one boundary layer holds on this host.
type Layer struct {
	Name  string `json:"name"`
	Holds bool   `json:"holds"`
	// Detail names what provides the layer here, or what is missing.
	Detail string `json:"detail"`
}

// Residual is a weaker layer the host provides with an accepted weakness.
type Residual struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// The verdicts of a Report.
const (
	VerdictOK        = "ok"                  // the boundary can be provided in full
	VerdictResiduals = "ok-with-residuals"   // provided, with the residuals listed
	VerdictCannot    = "host-cannot-provide" // a blocking result; see Blocking
)

// Verdict is the one-word answer and its explanation.
type Verdict struct {
	Status string `json:"status"`
	// Summary says it in a sentence.
	Summary string `json:"summary"`
	// Blocking lists the ids of the results that block.
	Blocking []string `json:"blocking,omitempty"`
}

// Report is doctor's whole answer, the document `agentbox doctor --json`
// prints.
type Report struct {
	Host      HostSummary `json:"host"`
	Checks    []Result    `json:"checks"`
	Layers    []Layer     `json:"layers"`
	Residuals []Residual  `json:"residuals"`
	// Modes says, per installed runtime, what agentbox run does with the
	// default root and with --rootfs; the verdict is about the default
	// root on the verdict runtime.
	Modes   []RuntimeMode `json:"runtime_modes"`
	Verdict Verdict       `json:"verdict"`
	// Probes are the self-test's probe results, when it ran.
	Probes []ledger.Probe `json:"probes,omitempty"`
}

// Exit codes of `agentbox doctor` (DESIGN.md §5).
const (
	ExitOK   = 0 // the boundary can be provided, in full or with accepted residuals
	ExitHost = 4 // the host cannot provide the boundary
)

// ExitCode is 0 when nothing blocks, else 4.
func (r Report) ExitCode() int {
	if r.Verdict.Status == VerdictCannot {
		return ExitHost
	}
	return ExitOK
}
