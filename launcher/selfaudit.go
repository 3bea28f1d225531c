package launcher

import (
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// auditSpec audits the rendered spec as an outsider would (the same checks
// that audit someone else's container). A finding that neither the policy
// accepts with a written reason nor the host imposes as a recorded residual
// refuses the launch.
func (p *prepared) auditSpec() error {
	plan := p.plan
	opts := audit.Options{Workspaces: []string{plan.Workspace}, HomeDirs: p.host.Homes, AllowEnv: plan.Agent.TokenVars, Accept: acceptances(plan), RuntimeAdvisories: p.advice.refusals()}
	for _, m := range plan.Mounts {
		switch {
		case m.ReadOnly && m.Kind == policy.KindInstall:
			opts.ReadOnlyPaths = append(opts.ReadOnlyPaths, m.Source)
		case m.ReadOnly && (m.Kind == policy.KindRuntime || m.Kind == policy.KindCover):
			opts.RuntimeFiles = append(opts.RuntimeFiles, m.Source)
		}
	}
	if plan.Init != "" && plan.Identity.Init.Split {
		// agentbox-init holds these only to start its children as the
		// agent, who drop them before they execute anything (and init
		// keeps CAP_KILL alone once the agent runs); capabilities-zero and
		// host-capabilities check the agent itself. The audit still
		// reports them, as init-capabilities.
		opts.Init = &audit.InitProcess{Path: plan.Init, Caps: plan.Identity.Init.Caps}
	}
	report := audit.Spec(p.spec, opts)
	var refused []audit.Finding
	for _, c := range report.Containers {
		for _, f := range c.Findings {
			if f.Fails() {
				refused = append(refused, f)
			}
			p.findings = append(p.findings, f)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	for _, f := range refused {
		subject, _, _ := strings.Cut(f.Subject, " -> ") // an acceptance names a bind by its source
		fmt.Fprintf(p.l.out, "agentbox: finding %s (%s) %s: %s; fix: %s; or %s\n", f.Code, f.Severity, ledger.Printable(f.Subject), ledger.Printable(f.Detail), f.Fix, ledger.Printable(policy.AcceptHint(f.Code, subject)))
	}
	return refusef("the generated sandbox has %d finding(s) the policy does not accept: %s; fix each one as shown, or accept it with a written reason", len(refused), codes(refused))
}

// acceptances are what the audit may tolerate: the policy's acceptances,
// then each residual this host imposes (code only, the host's reason). The
// audit applies them before it raises auto-approve, so an accepted finding
// never makes auto-approve refuse the launch. (The self-audit sees the
// spec, whose args are agentbox-init's; the agent's argv reaches the
// auto-approve check through the agent adapter's environment only.)
func acceptances(plan *policy.Plan) []policy.Acceptance {
	as := append([]policy.Acceptance(nil), plan.Accepted...)
	for _, r := range plan.Residuals {
		as = append(as, policy.Acceptance{Code: r.Code, Reason: "host: " + r.Reason})
	}
	return as
}

func codes(fs []audit.Finding) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code
	}
	return strings.Join(out, ", ")
}

// LedgerFindings converts audit findings for a ledger record.
func LedgerFindings(fs []audit.Finding) []ledger.Finding {
	out := make([]ledger.Finding, len(fs))
	for i, f := range fs {
		out[i] = ledger.Finding{Code: f.Code, Severity: string(f.Severity), Subject: f.Subject, Detail: f.Detail, Fix: f.Fix, Evidence: f.Evidence, Accepted: f.Accepted, Reason: f.AcceptedReason}
	}
	return out
}
