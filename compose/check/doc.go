// Package check audits compose projects the way agentbox compose does: its
// own rendering before anything is written (Prepare), and any compose file a
// user has (Files), with the change to the file that fixes each finding
// (Fix).
//
// It sits after the renderer in the pipeline (DESIGN.md §3): package compose
// translates a plan and never audits; this package reads what it rendered
// as an outsider would, with audit's checks, through compose-go.
//
// Security-relevant defaults, and how to change them:
//
//   - A variable whose value is a gateway token (netpolicy.TokenPrefix) is
//     not a secret in any service: the token is worth nothing outside the
//     gateway. Every other credential-shaped variable fails.
//   - A network with a way out is accepted, with GatewayEgressReason, only in
//     agentbox's own gateway service (IsGateway: the service named gateway
//     running agentbox's gateway image). On any other service it fails.
//   - user-namespace-not-used is accepted, with UserNSReason, on the services
//     agentbox compose writes, by their accept label (policy.AcceptLabel): a
//     compose file cannot ask every engine for a user namespace. Elsewhere it
//     stays informational, printed with the same reason.
//   - Findings are accepted only by the plan's (or the flags') accepted
//     codes, each with its written reason.
package check
