package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/agentbox/agentbox/policy"
)

// Finding is one fault found in one container (DESIGN.md §5).
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	// Subject is what the finding is about: "/home/ana -> /host-home",
	// "GITHUB_TOKEN", "CAP_SYS_ADMIN".
	Subject  string `json:"subject"`
	Detail   string `json:"detail"`
	Fix      string `json:"fix"`
	Evidence string `json:"evidence,omitempty"`
	// Probe is the self-test probe that proves the fix.
	Probe string `json:"probe,omitempty"`
	// Unknown is true when the source could not read what would decide the
	// finding; it fails like a known finding.
	Unknown bool `json:"unknown,omitempty"`
	// Accepted is true when the code is accepted with AcceptedReason.
	Accepted       bool   `json:"accepted,omitempty"`
	AcceptedReason string `json:"accepted_reason,omitempty"`
	// Also are the ids other tools give the same fault, "tool:id"
	// (pss:privileged, kube-linter:privileged-container); Kubernetes
	// manifests only (KubeRefs).
	Also []string `json:"also,omitempty"`
	// Location is the file and line that declare the fault (compose).
	Location
}

// Fails reports whether the finding fails an audit: it is not informational
// and not accepted.
func (f Finding) Fails() bool { return f.Severity != Info && !f.Accepted }

// Options carries what the caller knows that a configuration does not say.
// The zero value audits with no declared workspace, nothing accepted, only
// the built-in home directory patterns and no environment allowlist.
type Options struct {
	// Workspaces are the declared workspace paths (host side): the only
	// read-write binds that are expected. A bind at or below one is not a
	// home, system or extra-writable finding, unless the workspace is itself
	// a home directory (or holds one) or a system directory.
	Workspaces []string
	// ReadOnlyPaths are host paths the caller binds read-only on purpose
	// (the agent's install directory); a read-only bind at or below one is
	// exempt in the same way.
	ReadOnlyPaths []string
	// RuntimeFiles are host files the launcher itself binds read-only
	// (agentbox's init, a run's gateway socket), matched exactly: they are
	// exempt from the system-directory check only (the gateway socket lives
	// in the run directory under /run); the socket, home and root checks
	// still apply to them.
	RuntimeFiles []string
	// Accept are the accepted findings, each with its written reason
	// (policy.Acceptance.Covers decides which findings one covers). They
	// are applied before auto-approve is raised, so an accepted finding
	// never raises it.
	Accept []policy.Acceptance
	// HomeDirs are known home directories on the host, in addition to
	// /home/*, /root, /Users/* and /var/home/*.
	HomeDirs []string
	// AllowEnv are environment variable names allowed to hold a credential
	// (the gateway's own per-run key).
	AllowEnv []string
	// InternalNetworks are network names or network-namespace paths that
	// the caller vouches are internal (their only exit is the gateway).
	InternalNetworks []string
	// Init, when set, is the caller's own init (agentbox-init): see
	// InitProcess. Nil treats every process like any other.
	Init *InitProcess
	// RuntimeAdvisories are the runtime's vulnerabilities that the launch
	// exposes, each a runtime-vulnerable finding; nil when the caller
	// judged none (a configuration alone cannot say).
	RuntimeAdvisories []RuntimeAdvisory
}

// InitProcess is an init the caller itself runs as the container's process.
// It holds Caps only to start its children under another, unprivileged uid,
// and those children drop them (bounding set emptied, uid changed) before
// they execute anything. When the container's process is Path (argv[0]),
// Path is bound read-only, and the Caps are in no inheritable or ambient set
// (which would survive an exec), they are reported as one informational
// init-capabilities finding instead of capabilities-not-dropped or
// capabilities-added. Any other capability is a finding as usual, and
// nothing else changes: uid 0 is still runs-as-root without a user namespace.
type InitProcess struct {
	// Path is the init's path inside the container.
	Path string
	// Caps are the capabilities it holds for its children's sake.
	Caps []string
}

// ContainerReport is the audit of one container or compose service.
type ContainerReport struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	File   string `json:"file,omitempty"`
	// Profiles are the compose profiles the service belongs to.
	Profiles []string  `json:"profiles,omitempty"`
	Findings []Finding `json:"findings"`
	// PermissionMode is the agent's permission mode, to record beside the
	// audit ("none found" when no agent's setting was found).
	PermissionMode PermissionMode `json:"permission_mode"`
	// Notes say what the audit ignored and why: a workspace label that
	// names no read-write bind, an accept label for a finding that fails.
	Notes []string `json:"notes,omitempty"`
	// Model is the normalised configuration that was audited (environment
	// values excluded).
	Model Container `json:"model"`
	// Account is what an account audit (AuditAccount) read; nil otherwise.
	Account *AccountModel `json:"account,omitempty"`
}

// Report is one audit: every container audited, in input order. It is
// JSON-serialisable as the `--json` document and the ledger/labbook record.
type Report struct {
	Containers []ContainerReport `json:"containers"`
}

// Unaccepted returns the findings that fail the audit, in report order.
func (r Report) Unaccepted() []Finding {
	var out []Finding
	for _, c := range r.Containers {
		for _, f := range c.Findings {
			if f.Fails() {
				out = append(out, f)
			}
		}
	}
	return out
}

// Accepted returns the findings accepted as residuals, in report order.
func (r Report) Accepted() []Finding {
	var out []Finding
	for _, c := range r.Containers {
		for _, f := range c.Findings {
			if f.Accepted {
				out = append(out, f)
			}
		}
	}
	return out
}

// Record returns the report as one line of JSON (newline included): the
// record a ledger or a labbook file stores.
func (r Report) Record() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode audit record: %w", err)
	}
	return append(b, '\n'), nil
}

// AppendRecord appends the report's record to the file at path, creating it
// with mode 0600; the line is written with a single write to an O_APPEND file
// so concurrent audits do not interleave.
func AppendRecord(path string, r Report) error {
	b, err := r.Record()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open labbook: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("append to labbook %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close labbook %s: %w", path, err)
	}
	return nil
}

// ParseAccept parses a --accept argument, CODE=reason. The code must be in
// the catalog and the reason must not be empty.
func ParseAccept(s string) (code, reason string, err error) {
	code, reason, ok := strings.Cut(s, "=")
	code, reason = strings.TrimSpace(code), strings.TrimSpace(reason)
	if !ok || reason == "" {
		return "", "", fmt.Errorf("accept %q: want CODE=reason, with a written reason", s)
	}
	if _, known := catalog[code]; !known {
		return "", "", fmt.Errorf("accept %q: unknown finding code %q (see 'agentbox audit --codes')", s, code)
	}
	return code, reason, nil
}

// sortFindings orders findings by severity, then code, then subject, keeping
// the output stable.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Subject < b.Subject
	})
}
