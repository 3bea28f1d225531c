package ledger

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind says which command wrote a record.
type Kind string

// The kinds of record.
const (
	KindRun      Kind = "run"
	KindAudit    Kind = "audit"
	KindGC       Kind = "gc"
	KindDoctor   Kind = "doctor"
	KindSelftest Kind = "selftest"
)

var kinds = []Kind{KindRun, KindAudit, KindGC, KindDoctor, KindSelftest}

// Record is one line of the ledger: the evidence of one invocation
// (DESIGN.md §5 "Ledger record"). Empty fields are left out of the JSON,
// except ExitCode, which is always written.
type Record struct {
	RunID   string    `json:"run_id"`            // from NewRunID; required
	Kind    Kind      `json:"kind"`              // required
	Start   time.Time `json:"start"`             // required
	End     time.Time `json:"end,omitzero"`      // zero: the record was written before the end (or never reached it)
	Command []string  `json:"command,omitempty"` // the agent's argv; never its environment

	Agent          string `json:"agent,omitempty"`           // adapter name (codex, claude, …); empty: a plain command
	PermissionMode string `json:"permission_mode,omitempty"` // how the agent approves its own actions, as the adapter names it

	Digests Digests `json:"digests,omitzero"`
	// PolicySources are the policy files the run's policy came from, each
	// with why it was believed ("user", "explicit", or "workspace": trusted
	// by digest) and the digest of the bytes that were used.
	PolicySources []PolicySource `json:"policy_sources,omitempty"`
	Findings      []Finding      `json:"findings,omitempty"`  // audit findings, accepted ones included
	Residuals     []Residual     `json:"residuals,omitempty"` // weaker layers the host could not provide
	Probes        []Probe        `json:"probes,omitempty"`    // every probe result, passed ones included

	// HostVerification holds what the launcher observed from outside the
	// sandbox, one named observation per key ("uid_map", "CapEff",
	// "NoNewPrivs", "Seccomp", "canary-home", …).
	HostVerification map[string]string `json:"host_verification,omitempty"`

	// Binds are the host paths bound into the sandbox beyond its system
	// directories and workspace: the command's closure (its install
	// prefixes, interpreters, venvs, each with why it is there) and the
	// policy's extra binds.
	Binds []Bind `json:"binds,omitempty"`

	Gateway Gateway `json:"gateway,omitzero"`
	// Denials are the agent's attempts that a layer refused, in order
	// (docs/denials.md); DenialLayers says which layers logged them on
	// this host, and why not where one could not. Empty layers: the run
	// kept no denial log (a record of another kind, or of before it).
	Denials      []Denial      `json:"denials,omitempty"`
	DenialLayers []DenialLayer `json:"denial_layers,omitempty"`

	// Attempts are the steps of an escape-prompt self-test, in order;
	// empty for any other run.
	Attempts []Attempt `json:"attempts,omitempty"`

	Teardown *Teardown `json:"teardown,omitempty"` // nil: no sandbox was started

	// Workspace is what the launcher found in the workspace: the unix
	// sockets there at launch and the files the agent left that host tools
	// execute on their own; nil when it was not inspected.
	Workspace *Workspace `json:"workspace,omitempty"`

	ExitCode int    `json:"exit_code"` // the process exit code agentbox returned
	Notes    string `json:"notes,omitempty"`
	// Error is the error that ended the invocation before its work was
	// done (a launch the host could not provide, a refused boundary);
	// empty when it ran to its end.
	Error string `json:"error,omitempty"`
}

// Digests identifies the artifacts a run used, each "sha256:<hex>".
type Digests struct {
	Policy  string `json:"policy,omitempty"`
	Spec    string `json:"spec,omitempty"`
	Seccomp string `json:"seccomp,omitempty"`
}

// PolicySource is one policy file that went into a run.
type PolicySource struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Digest string `json:"digest"`
}

// Finding mirrors the audit finding contract (DESIGN.md §5), plus whether
// the policy accepted it and the policy's written reason.
type Finding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Subject  string `json:"subject,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Fix      string `json:"fix,omitempty"`
	Evidence string `json:"evidence,omitempty"`
	Accepted bool   `json:"accepted,omitempty"`
	Reason   string `json:"reason,omitempty"` // the policy's reason for accepting it
}

// Residual is a layer of the boundary that the host could not provide,
// named and recorded instead of silently skipped.
type Residual struct {
	Code   string `json:"code"`   // stable kebab-case, e.g. "no-lsm-label"
	Detail string `json:"detail"` // what is missing and why
}

// Probe mirrors the probe result contract (DESIGN.md §5).
type Probe struct {
	Probe    string `json:"probe"`
	Target   string `json:"target,omitempty"`
	Expect   string `json:"expect"`   // DENY or ALLOW
	Decision string `json:"decision"` // DENY, ALLOW or UNKNOWN
	Observed string `json:"observed,omitempty"`
	RunID    string `json:"run_id,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// Passed reports whether the probe's decision is the expected one. UNKNOWN
// never passes.
func (p Probe) Passed() bool { return p.Decision == p.Expect && p.Decision != "UNKNOWN" }

// Bind is one host path bound into the sandbox (at the same path).
type Bind struct {
	Source   string `json:"source"`
	Kind     string `json:"kind"` // the plan's mount kind: install (the command's closure) or extra (the policy's)
	ReadOnly bool   `json:"read_only"`
	Why      string `json:"why,omitempty"`
}

// Gateway counts the gateway's decisions during the run.
type Gateway struct {
	Allowed int `json:"allowed"`
	Denied  int `json:"denied"`
	// LogDropped is how many decisions the gateway's decision log did not
	// write because it reached its byte cap (the counts above stay exact).
	LogDropped int `json:"log_dropped,omitempty"`
}

// Teardown is what teardown found and did (DESIGN.md §5): the engine that
// took the sandbox down writes it, and the ledger keeps it as it is.
type Teardown struct {
	SurvivingPIDs   []int    `json:"surviving_pids,omitempty"`
	RemainingMounts []string `json:"remaining_mounts,omitempty"`
	// RuntimeStateLeft names what the runtime still holds of the sandbox
	// (its state directory, the container it still knows) and the cgroups
	// that could not be removed.
	RuntimeStateLeft []string `json:"runtime_state_left,omitempty"`
	OpenSockets      []string `json:"open_sockets,omitempty"`
	// Decision is what teardown concluded: DecisionClean when nothing of
	// the run survives, DecisionResidue when something does or a cleanup
	// failed (the run directory is then kept for a later gc).
	Decision Decision `json:"cleanup"`
	// Errors are what went wrong on the way, a residue's reasons among
	// them.
	Errors []string `json:"errors,omitempty"`
	// WorkspaceGrant is set when a root-owned workspace was granted to the
	// agent's unprivileged host uid for the run (docs/userns.md).
	WorkspaceGrant *WorkspaceGrant `json:"workspace_grant,omitempty"`
}

// Decision is teardown's conclusion.
type Decision string

// The decisions of teardown.
const (
	DecisionClean   Decision = "clean"
	DecisionResidue Decision = "residue"
)

// UnmarshalJSON reads a record of either shape: this one, and the one of
// before Errors, whose cleanup was the decision and its errors in one
// string ("residue: [remove run directory: …]").
func (t *Teardown) UnmarshalJSON(data []byte) error {
	type plain Teardown
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if d, rest, ok := strings.Cut(string(p.Decision), ": "); ok && (Decision(d) == DecisionClean || Decision(d) == DecisionResidue) {
		p.Decision, p.Errors = Decision(d), append([]string{rest}, p.Errors...)
	}
	*t = Teardown(p)
	return nil
}

// Summary is the decision and, after a colon, the errors, in one line.
func (t Teardown) Summary() string {
	if len(t.Errors) == 0 {
		return string(t.Decision)
	}
	return string(t.Decision) + ": " + strings.Join(t.Errors, "; ")
}

// WorkspaceGrant is how a root-owned workspace was handed to the agent and
// taken back at teardown.
type WorkspaceGrant struct {
	Method string `json:"method"`           // "acl", "chown" or "idmap"
	Reason string `json:"reason,omitempty"` // why that method
	Grant  string `json:"grant,omitempty"`  // what the grant did, in one line
	Revoke string `json:"revoke,omitempty"` // what the revoke did, in one line
	// SetIDCleared lists the agent's files whose set-uid or set-gid bit was
	// cleared before they were given back to the workspace's owner.
	SetIDCleared []string `json:"setid_cleared,omitempty"`
	// Skipped lists what the grant or revoke did not walk (mount points,
	// entries replaced while it ran).
	Skipped []string `json:"skipped,omitempty"`
}

// Clean reports whether nothing of the sandbox survived and the cleanup did
// not record a residue of its own (a workspace grant it could not revoke,
// say).
func (t Teardown) Clean() bool {
	return len(t.SurvivingPIDs)+len(t.RemainingMounts)+len(t.RuntimeStateLeft)+len(t.OpenSockets) == 0 &&
		t.Decision != DecisionResidue
}

// Verdicts returned by Record.Verdict, worst first.
const (
	VerdictTeardownDirty = "teardown-dirty"
	VerdictProbeFailed   = "probe-failed"
	VerdictFindings      = "findings"
	VerdictError         = "error"
	VerdictOK            = "ok"
)

// Verdict summarises the boundary evidence in one word: VerdictTeardownDirty
// when something survived teardown, VerdictProbeFailed when a probe did not
// pass, VerdictFindings when a finding was not accepted, VerdictError when
// the invocation ended in an error, else VerdictOK. It
// says nothing about the agent's own exit code.
func (r Record) Verdict() string {
	switch {
	case r.Teardown != nil && !r.Teardown.Clean():
		return VerdictTeardownDirty
	case slices.ContainsFunc(r.Probes, func(p Probe) bool { return !p.Passed() }):
		return VerdictProbeFailed
	case slices.ContainsFunc(r.Findings, func(f Finding) bool { return !f.Accepted }):
		return VerdictFindings
	case r.Error != "":
		return VerdictError
	}
	return VerdictOK
}

// Validate checks the fields every record must have.
func (r Record) Validate() error {
	if err := ValidRunID(r.RunID); err != nil {
		return err
	}
	if !slices.Contains(kinds, r.Kind) {
		return fmt.Errorf("record %s: kind %q is not one of %v", r.RunID, r.Kind, kinds)
	}
	if r.Start.IsZero() {
		return fmt.Errorf("record %s: no start time", r.RunID)
	}
	return nil
}

// Workspace is the launcher's inspection of the workspace (docs/workspace.md).
type Workspace struct {
	// Sockets are the pathname unix sockets found at launch, relative to
	// the workspace; each was covered by an empty read-only file inside.
	Sockets []string `json:"sockets,omitempty"`
	// Leftovers are the files the agent created or changed that host tools
	// execute on their own (DESIGN.md §5).
	Leftovers []Leftover `json:"leftovers,omitempty"`
	// Capped says where an inspection stopped short (a bound reached,
	// another file system); what lies beyond was neither covered nor
	// compared.
	Capped []string `json:"capped,omitempty"`
}

// Leftover is one file the agent left for a host tool. Every string in it
// is agent-controlled.
type Leftover struct {
	Path   string `json:"path"`             // relative to the workspace
	Kind   string `json:"kind"`             // git-config, git-hook, gitdir-file, envrc, vscode-tasks, devcontainer, protected
	Change string `json:"change"`           // created or changed
	Key    string `json:"key,omitempty"`    // the executable git key, for git-config
	Value  string `json:"value,omitempty"`  // its value (at most 256 bytes)
	Detail string `json:"detail,omitempty"` // what runs it
}
