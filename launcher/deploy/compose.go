package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/compose/check"
	"github.com/agentbox/agentbox/host"
	. "github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

// ComposeConfig drives the compose pipeline (agentbox compose): Policy →
// Plan for an engine-run sandbox → compose render → self-audit → the
// project written, or, with Check, the audit of existing compose files.
type ComposeConfig struct {
	// Policy and Sources are as in Config; Cwd is the directory relative
	// paths and the default workspace and output are taken from.
	Policy  policy.Policy
	Sources policy.Sources
	Cwd     string
	// Getenv reads the environment (HOME, the state directory's
	// variables); nil reads nothing. Environ is the environment compose
	// files are interpolated with (--check).
	Getenv  func(string) string
	Environ []string
	// Args are the invocation's arguments, for the ledger.
	Args []string

	// Agent is the adapter whose command the agent runs (codex, claude),
	// or "" to run Command; Image is the agent's image.
	Agent, Image string
	Command      []string
	// OutDir is the output directory ("" for Cwd/agentbox-compose);
	// Force replaces files there that differ from the rendering.
	OutDir string
	Force  bool

	// Check, when not empty, are compose files (merged in order) to audit
	// instead of writing a project.
	Check []string
}

// ComposeResult is what the compose pipeline produced.
type ComposeResult struct {
	// Report is the audit: of the rendered project, or of the Check files.
	Report audit.Report
	// Output is the rendered project and Written what writing it did;
	// OutDir is where. All zero for a Check.
	Output  *compose.Output
	Written compose.WriteResult
	OutDir  string
	// LedgerErr is why the audit's record could not be appended to the
	// ledger (a warning: the result stands), nil when it was.
	LedgerErr error
}

// Compose renders the project the policy describes, audits it, and writes
// it when no finding fails; the audit is recorded in the ledger either
// way. A failing finding is a refusal (KindRefused) and writes nothing;
// the result's Report then names the findings.
func Compose(ctx context.Context, cfg ComposeConfig) (ComposeResult, error) {
	plan, opts, err := composeInputs(cfg)
	if err != nil {
		return ComposeResult{}, err
	}
	start := time.Now().UTC()
	out, report, err := check.Prepare(ctx, plan, opts, cfg.homes())
	if err != nil {
		return ComposeResult{}, err
	}
	res := ComposeResult{Report: report, Output: out, OutDir: opts.OutDir}
	if n := len(report.Unaccepted()); n > 0 {
		res.LedgerErr = cfg.record(start, report, out, ExitRefused, fmt.Sprintf("refused: %d finding(s) failing; nothing written", n))
		return res, WithKind(KindRefused, fmt.Errorf("the rendered project fails its own audit (%d finding(s)); nothing was written", n))
	}
	if res.Written, err = compose.Write(opts.OutDir, out.Files, cfg.Force); err != nil {
		return res, err
	}
	res.LedgerErr = cfg.record(start, report, out, ExitOK, "written to "+opts.OutDir)
	return res, nil
}

// ComposeCheck audits existing compose files against the policy's
// workspace and acceptances, and records the audit. The caller prints the
// findings; ExitFindings is the exit code when any fails.
func ComposeCheck(ctx context.Context, cfg ComposeConfig) (ComposeResult, error) {
	p, _, err := LoadPolicy(cfg.Policy, cfg.Sources)
	if err != nil {
		return ComposeResult{}, err
	}
	ws := p.Workspace
	if ws == "" {
		ws = cfg.Cwd
	}
	o := check.Options{Workspaces: []string{ws}, HomeDirs: cfg.homes(), Accept: p.Accept}
	start := time.Now().UTC()
	r, err := check.Files(ctx, cfg.Check, cfg.Environ, o)
	if err != nil {
		return ComposeResult{Report: r}, err
	}
	n, code := len(r.Unaccepted()), ExitOK
	if n > 0 {
		code = ExitFindings
	}
	return ComposeResult{Report: r, LedgerErr: cfg.record(start, r, nil, code, fmt.Sprintf("--check: %d finding(s) failing", n))}, nil
}

// composeInputs gathers the plan and the renderer's options: the policy
// resolved for an engine-run sandbox, the agent, the output directory, the
// gateway key (kept from an existing project), this binary and the CA bundle.
func composeInputs(cfg ComposeConfig) (*policy.Plan, compose.Options, error) {
	var o compose.Options
	if cfg.Policy.Runtime != "" || cfg.Policy.Rootfs != "" {
		return nil, o, &compose.InputError{Msg: "--runtime and --rootfs do not apply: the engine picks the runtime and --image is the root"}
	}
	p, _, err := LoadPolicy(cfg.Policy, cfg.Sources)
	if err != nil {
		return nil, o, err
	}
	h, err := host.Capture(cfg.Environ)
	if err != nil {
		return nil, o, err
	}
	plan, err := policy.Resolve(p, compose.PlanArgv, h, compose.PlanRun())
	if err != nil {
		return nil, o, err
	}
	if o.Command, err = composeCommand(cfg); err != nil {
		return nil, o, err
	}
	o.Image = cfg.Image
	if err := composeOutput(cfg, &o); err != nil {
		return nil, o, err
	}
	if os.Geteuid() != 0 { // the key files this user creates must be the gateway's to read
		o.GatewayUID, o.GatewayGID = uint32(os.Geteuid()), uint32(os.Getegid())
	}
	return plan, o, nil
}

// composeCommand is the agent's command: the adapter's, or the one given.
func composeCommand(cfg ComposeConfig) ([]string, error) {
	if cfg.Agent == "" {
		return cfg.Command, nil
	}
	if len(cfg.Command) > 0 {
		return nil, &compose.InputError{
			Field: "--agent", Msg: "give --agent or a command after --, not both",
			Fix: "a command starting with codex or claude is adapted as --agent is",
		}
	}
	return compose.AgentCommand(cfg.Agent)
}

// composeOutput fills the output directory, the gateway's token (kept from
// an existing project), the gateway binary (this one) and the CA bundle.
func composeOutput(cfg ComposeConfig, o *compose.Options) error {
	out := cfg.OutDir
	if out == "" {
		out = filepath.Join(cfg.Cwd, "agentbox-compose")
	}
	var err error
	if o.OutDir, err = compose.ResolveOutDir(out); err != nil {
		return err
	}
	if o.Token = compose.ExistingToken(o.OutDir); o.Token == "" {
		if o.Token, err = netpolicy.NewToken(); err != nil {
			return err
		}
	}
	if o.GatewayBinary, err = selfBinary(); err != nil {
		return err
	}
	o.CABundle, err = compose.HostCABundle()
	return err
}

// selfBinary is the program the gateway image runs as `agentbox gateway`:
// the launch binary beside agentbox-ext, which runs compose, when it is
// there, else the running program (a test's, or agentbox-ext, which has
// every command too).
func selfBinary() ([]byte, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the agentbox binary for the gateway image: %w", err)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "agentbox")); err == nil && filepath.Base(self) == HelperName {
		return b, nil
	}
	return os.ReadFile(self)
}

func (cfg ComposeConfig) getenv(k string) string {
	if cfg.Getenv == nil {
		return ""
	}
	return cfg.Getenv(k)
}

// homes are the host's home directories, the planner's list.
func (cfg ComposeConfig) homes() []string { return host.Homes("/etc/passwd", cfg.getenv("HOME")) }

// record appends the self-audit, or the --check, to the ledger as an audit
// record; a ledger that cannot be written changes nothing of the result.
func (cfg ComposeConfig) record(start time.Time, r audit.Report, out *compose.Output, code int, note string) error {
	rec := AuditRecord(append([]string{"agentbox", "compose"}, cfg.Args...), start, r, code, note)
	if out != nil {
		rec.Agent, rec.PermissionMode = out.Agent, out.Permission.Mode
		for _, res := range out.Residuals {
			rec.Residuals = append(rec.Residuals, ledger.Residual{Code: res.Code, Detail: res.Reason})
		}
		if sc := out.File(compose.SeccompFile); sc != nil {
			sum := sha256.Sum256(sc.Data)
			rec.Digests.Seccomp = "sha256:" + hex.EncodeToString(sum[:])
		}
	}
	return AppendRecord(cfg.getenv, rec)
}

// BuildGateway builds the gateway image of the project Compose wrote, with
// the docker CLI or podman's, their output to out. The context is the
// Dockerfile (FROM scratch: nothing is pulled), the static binary and the
// CA bundle.
func BuildGateway(ctx context.Context, res ComposeResult, out io.Writer) error {
	dir, image := filepath.Join(res.OutDir, compose.BuildDir), res.Output.GatewayImage
	for _, name := range []string{"docker", "podman"} {
		cli, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		cmd := exec.CommandContext(ctx, cli, "build", "--tag", image, dir)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s build --tag %s %s: %w", name, image, dir, err)
		}
		return nil
	}
	return WithKind(KindHost, fmt.Errorf("build the gateway image: neither docker nor podman is on the PATH; install docker.io, or build it elsewhere with: docker build --tag %s %s", image, dir))
}
