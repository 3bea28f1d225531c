package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/audit/manifest"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// Reasons for the residuals a compose project keeps by design.
const (
	// GatewayEgressReason is why the gateway's network is not internal.
	GatewayEgressReason = "the gateway is the sandbox's only way out: it forwards model requests with the real key and refuses every other destination not on its allowlist; the agent is on the internal network only"
	// UserNSReason is why no user namespace is asked for: the reason the
	// rendered services carry in their accept label.
	UserNSReason = compose.UserNSReason
)

// Options is what the audit of a compose project knows that the files do
// not say.
type Options struct {
	// Workspaces are the declared workspace paths; nil means none.
	Workspaces []string
	// ReadOnlyPaths are host paths bound read-only on purpose (the output
	// directory, for the gateway's config); nil means none.
	ReadOnlyPaths []string
	// HomeDirs are home directories beyond the built-in patterns.
	HomeDirs []string
	// Accept are the accepted findings (policy.Acceptance.Covers); nil
	// accepts none.
	Accept []policy.Acceptance
}

// Services audits the services of a compose project one by one. In each, a
// variable whose value is a gateway token (netpolicy.TokenPrefix) is allowed:
// the token is worth nothing outside the gateway. In agentbox's own gateway
// service (IsGateway), a network that is known not to be internal is
// accepted with GatewayEgressReason; in every other service it fails.
func Services(cs []audit.Container, o Options) audit.Report {
	var r audit.Report
	for _, c := range cs {
		opts := audit.Options{
			Workspaces: o.Workspaces, ReadOnlyPaths: o.ReadOnlyPaths, HomeDirs: o.HomeDirs,
			Accept: o.Accept, AllowEnv: tokenVars(c),
		}
		cr := audit.Audit([]audit.Container{c}, opts).Containers[0]
		if IsGateway(c) {
			acceptEgress(cr.Findings)
		}
		r.Containers = append(r.Containers, cr)
	}
	return r
}

// IsGateway reports whether c is the gateway service of a project that
// agentbox compose wrote: named gateway, running agentbox's gateway image.
func IsGateway(c audit.Container) bool {
	return serviceName(c.Name) == compose.GatewayService && strings.HasPrefix(c.Image, compose.GatewayImageRepo+":")
}

func tokenVars(c audit.Container) []string {
	var names []string
	for _, e := range c.Env {
		if strings.HasPrefix(e.Value, netpolicy.TokenPrefix) {
			names = append(names, e.Name)
		}
	}
	return names
}

func acceptEgress(fs []audit.Finding) {
	for i := range fs {
		if fs[i].Code == audit.CodeNetworkPolicy && !fs[i].Unknown && !fs[i].Accepted {
			fs[i].Accepted, fs[i].AcceptedReason = true, GatewayEgressReason
		}
	}
}

// Prepare renders the project for plan and audits it as an engine would
// read it: compose.yaml loaded back with compose-go from the output
// directory, with the plan's workspace and accepted findings. Nothing is
// written to opts.OutDir; the seccomp profile the audit compares is read
// from a private staging copy. The caller writes out.Files only when
// report.Unaccepted() is empty.
func Prepare(ctx context.Context, plan *policy.Plan, opts compose.Options, homes []string) (*compose.Output, audit.Report, error) {
	out, err := compose.Render(plan, opts)
	if err != nil {
		return nil, audit.Report{}, err
	}
	staging, err := os.MkdirTemp("", "agentbox-compose-")
	if err != nil {
		return nil, audit.Report{}, err
	}
	defer os.RemoveAll(staging)
	opts.SeccompDir = staging
	staged, err := compose.Render(plan, opts)
	if err != nil {
		return nil, audit.Report{}, err
	}
	files := []compose.File{*staged.File(compose.ComposeFile), *staged.File(compose.SeccompFile)}
	if _, err := compose.Write(staging, files, false); err != nil {
		return nil, audit.Report{}, fmt.Errorf("stage the project for its audit: %w", err)
	}
	cs, err := manifest.LoadCompose(ctx, []string{filepath.Join(staging, compose.ComposeFile)},
		manifest.ComposeOptions{WorkingDir: opts.OutDir, ProjectName: "agentbox"})
	if err != nil {
		return nil, audit.Report{}, fmt.Errorf("load the rendered project back: %w", err)
	}
	r := Services(cs, Options{Workspaces: []string{plan.Workspace}, ReadOnlyPaths: []string{opts.OutDir}, HomeDirs: homes, Accept: plan.Accepted})
	relocate(&r, staging, opts.OutDir)
	return out, r, nil
}

// relocate makes the report name the files where they are to be written,
// not the staging copies the audit read.
func relocate(r *audit.Report, from, to string) {
	move := func(p string) string {
		if rest, ok := strings.CutPrefix(p, from+"/"); ok {
			return filepath.Join(to, rest)
		}
		return p
	}
	for i := range r.Containers {
		c := &r.Containers[i]
		c.File, c.Model.File = move(c.File), move(c.Model.File)
		for j := range c.Findings {
			c.Findings[j].File = move(c.Findings[j].File)
		}
	}
}

// Files loads a compose project from files (merged in order, as
// `docker compose -f a -f b` does) and audits it as Services does. env is
// the environment for interpolation.
func Files(ctx context.Context, files []string, env []string, o Options) (audit.Report, error) {
	cs, err := manifest.LoadCompose(ctx, files, manifest.ComposeOptions{Env: env})
	if err != nil {
		return audit.Report{}, err
	}
	return Services(cs, o), nil
}
