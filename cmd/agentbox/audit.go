//go:build agentbox_ext

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/audit/manifest"
	"github.com/agentbox/agentbox/host"
	"github.com/agentbox/agentbox/launcher"
)

func init() {
	register(command{name: "audit", summary: "name the faults in a container, OCI config, inspect JSON or compose file", run: runAudit})
}

// auditFlags are the flags of `agentbox audit`.
type auditFlags struct {
	engine, host, source, format, labbook, projectDir, color, user string
	asJSON, diagnose, codes, policiesElsewhere                     bool
	accept, workspaces, allowEnv, internal, profiles               []string
}

func runAudit(ctx context.Context, s stdio, args []string) int {
	fs := newFlags(s, "audit", "[flags] CONTAINER|BUNDLE|config.json|inspect.json|compose.yaml... | --user NAME")
	var f auditFlags
	fs.StringVar(&f.engine, "engine", "docker", "engine that runs CONTAINER: docker or podman")
	fs.StringVar(&f.host, "host", "", "engine socket path (default: DOCKER_HOST/CONTAINER_HOST or the engine's default socket)")
	fs.StringVar(&f.source, "source", "", "force the target kind: container, oci, inspect, compose or kube (default: detect)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON document with a containers array")
	fs.StringVar(&f.format, "format", "text", "output format: text, json or sarif")
	fs.BoolVar(&f.diagnose, "diagnose", false, "print each finding as an incident note: symptom, evidence, fault, fix, proof, residual")
	fs.StringVar(&f.labbook, "labbook", "", "append the audit record (one JSON line) to FILE")
	fs.StringArrayVar(&f.accept, "accept", nil, "accept a finding code with a written reason: CODE=reason (repeatable)")
	fs.StringArrayVar(&f.workspaces, "workspace", nil, "declared workspace path: the one read-write bind that is expected (repeatable)")
	fs.StringArrayVar(&f.allowEnv, "allow-env", nil, "environment variable allowed to hold a credential, e.g. the gateway's key (repeatable)")
	fs.StringArrayVar(&f.internal, "internal-network", nil, "network name or netns path you vouch is internal (repeatable)")
	fs.BoolVar(&f.policiesElsewhere, "policies-elsewhere", false, "Kubernetes: you vouch that NetworkPolicies outside the input restrict every pod's egress")
	fs.StringArrayVar(&f.profiles, "profile", nil, "audit only what 'docker compose --profile NAME up' runs (repeatable; default: every service, whatever its profiles)")
	fs.StringVar(&f.projectDir, "project-directory", "", "compose project directory (default: the first compose file's)")
	fs.StringVar(&f.color, "color", "auto", "colour the text output: auto, always or never")
	fs.BoolVar(&f.codes, "codes", false, "list the finding catalog and exit")
	fs.StringVar(&f.user, "user", "", "audit the user account NAME the agent would run as, instead of targets (Linux)")
	targets, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if f.asJSON {
		f.format = "json"
	}
	if f.codes {
		_ = audit.WriteCatalog(s.Out)
		return exitOK
	}
	if (len(targets) == 0) == (f.user == "") || len(cmd) > 0 {
		fs.Usage()
		return exitUsage
	}
	opts, err := auditOptions(s, f)
	if err != nil {
		return fail(s, "audit", launcher.WithKind(launcher.KindUsage, err))
	}
	start := time.Now().UTC()
	r, err := audit.LoadAndAudit(ctx, targets, loadOptions(s, f), opts)
	if err != nil {
		// What audit cannot load is bad input; an engine that does not
		// answer stays the host's (launcher.KindOf).
		return fail(s, "audit", launcher.WithKind(launcher.KindUsage, err))
	}
	code = finishAudit(s, f, r)
	recordAudit(s, start, targets, r, code)
	return code
}

// recordAudit appends the audit to the evidence ledger. A ledger that
// cannot be written is a warning, not a different audit result.
func recordAudit(s stdio, start time.Time, targets []string, r audit.Report, code int) {
	note := fmt.Sprintf("%d container(s), %d finding(s) failing", len(r.Containers), len(r.Unaccepted()))
	rec := launcher.AuditRecord(append([]string{"agentbox", "audit"}, targets...), start, r, code, note)
	if err := launcher.AppendRecord(s.Getenv, rec); err != nil {
		fmt.Fprintf(s.Err, "agentbox audit: warning: ledger: %v\n", err)
	}
}

func auditOptions(s stdio, f auditFlags) (audit.Options, error) {
	return audit.Flags{
		Format: f.format, Accept: f.accept, Workspaces: f.workspaces, AllowEnv: f.allowEnv, Internal: f.internal,
		HomeDirs: host.Homes("/etc/passwd", s.Getenv("HOME")),
	}.Options()
}

func loadOptions(s stdio, f auditFlags) audit.LoadOptions {
	lo := audit.LoadOptions{Kind: f.source, Engine: f.engine, Host: f.host, User: f.user, Account: audit.AccountOptions{InvokerHome: s.Getenv("HOME")}}
	return manifest.Loaders(lo, manifest.ComposeOptions{Env: os.Environ(), Profiles: f.profiles, WorkingDir: f.projectDir},
		manifest.KubeOptions{PoliciesElsewhere: f.policiesElsewhere})
}

// finishAudit writes the report, appends the labbook record and returns 1
// when a finding fails, 0 otherwise.
func finishAudit(s stdio, f auditFlags, r audit.Report) int {
	var err error
	switch {
	case f.diagnose:
		err = audit.WriteDiagnose(s.Out, r)
	case f.format == "json":
		err = audit.WriteJSON(s.Out, r)
	case f.format == "sarif":
		err = audit.WriteSARIF(s.Out, r, "")
	default:
		err = audit.WriteText(s.Out, r, useColor(s, f.color))
	}
	if err == nil && f.labbook != "" {
		err = audit.AppendRecord(f.labbook, r)
	}
	if err != nil {
		return fail(s, "audit", launcher.WithKind(launcher.KindUsage, err))
	}
	if len(r.Unaccepted()) > 0 {
		return exitFindings
	}
	return exitOK
}

// useColor: always, never, or auto (a terminal, NO_COLOR unset, TERM not dumb).
func useColor(s stdio, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if s.Getenv("NO_COLOR") != "" || s.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(s.Out)
}
