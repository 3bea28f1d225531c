package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/compose/check"
	"github.com/agentbox/agentbox/host"
	"github.com/agentbox/agentbox/launcher"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/netpolicy"
	"github.com/agentbox/agentbox/policy"
)

func init() {
	register(command{name: "compose", summary: "write a hardened compose project (agent + gateway + internal network), or --check one", run: runCompose})
}

// composeFlags are the flags of `agentbox compose`.
type composeFlags struct {
	policy            policyFlags
	agent, image, out string
	build, force      bool
	check             []string
	args              []string // as given, for the ledger
}

func runCompose(ctx context.Context, s stdio, args []string) int {
	fs := newFlags(s, "compose", "[--agent codex|claude] --image IMAGE [--out DIR] [--build] [flags] [-- CMD [ARG...]]\n       agentbox compose --check FILE [--check OVERRIDE...]")
	f := composeFlags{args: args}
	fs.StringVar(&f.agent, "agent", "", "agent adapter: "+fmt.Sprint(compose.AgentNames())+" (its command, unless one follows --)")
	fs.StringVar(&f.image, "image", "", "the agent's image (required)")
	fs.StringVar(&f.out, "out", "", "output directory (default: ./agentbox-compose)")
	fs.BoolVar(&f.build, "build", false, "also build the gateway image (docker build, from local files only)")
	fs.BoolVar(&f.force, "force", false, "replace files in --out that differ from the rendering")
	fs.StringArrayVar(&f.check, "check", nil, "audit this compose file instead and print the fix for each finding (repeatable: merged in order)")
	f.policy.register(fs)
	pos, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(s.Err, "agentbox compose: unexpected argument %q; a command goes after --\n", pos[0])
		return exitUsage
	}
	if len(f.check) > 0 {
		return composeCheck(ctx, s, f)
	}
	return composeWrite(ctx, s, f, cmd)
}

// composeCheck audits existing compose files and prints each fix.
func composeCheck(ctx context.Context, s stdio, f composeFlags) int {
	cwd, err := os.Getwd()
	if err != nil {
		return composeFail(s, err)
	}
	p, _, err := f.policy.load(cwd, s.Getenv)
	if err != nil {
		return composeFail(s, err)
	}
	ws := p.Workspace
	if ws == "" {
		ws = cwd
	}
	o := check.Options{Workspaces: []string{ws}, HomeDirs: host.Homes("/etc/passwd", s.Getenv("HOME")), Accept: p.Accept}
	start := time.Now().UTC()
	r, err := check.Files(ctx, f.check, os.Environ(), o)
	if err != nil {
		return composeFail(s, err)
	}
	n, err := check.WriteFindings(s.Out, r)
	if err == nil {
		err = check.WriteResiduals(s.Out, r)
	}
	if err != nil {
		return composeFail(s, err)
	}
	fmt.Fprintf(s.Out, "%d finding(s).\n", n)
	code := exitOK
	if n > 0 {
		code = exitFindings
	}
	recordCompose(s, start, f.args, r, nil, code, fmt.Sprintf("--check: %d finding(s) failing", n))
	return code
}

// composeWrite renders the project, audits it and writes it.
func composeWrite(ctx context.Context, s stdio, f composeFlags, cmd []string) int {
	if f.policy.runtime != "" || f.policy.rootfs != "" {
		fmt.Fprintln(s.Err, "agentbox compose: --runtime and --rootfs do not apply: the engine picks the runtime and --image is the root")
		return exitUsage
	}
	plan, opts, err := composeInputs(s, f, cmd)
	if err != nil {
		return composeFail(s, err)
	}
	start := time.Now().UTC()
	out, report, err := check.Prepare(ctx, plan, opts, host.Homes("/etc/passwd", s.Getenv("HOME")))
	if err != nil {
		return composeFail(s, err)
	}
	if n := len(report.Unaccepted()); n > 0 {
		fmt.Fprintf(s.Err, "agentbox compose: the rendered project fails its own audit; nothing was written:\n")
		if _, err := check.WriteFindings(s.Err, report); err != nil {
			return composeFail(s, err)
		}
		recordCompose(s, start, f.args, report, out, exitRefused, fmt.Sprintf("refused: %d finding(s) failing; nothing written", n))
		return exitRefused
	}
	res, err := compose.Write(opts.OutDir, out.Files, f.force)
	if err != nil {
		return composeFail(s, err)
	}
	recordCompose(s, start, f.args, report, out, exitOK, "written to "+opts.OutDir)
	if err := check.WriteSummary(s.Out, opts.OutDir, out, report, res); err != nil {
		return composeFail(s, err)
	}
	if f.build {
		if err := buildGateway(ctx, s, filepath.Join(opts.OutDir, compose.BuildDir), out.GatewayImage); err != nil {
			return composeFail(s, err)
		}
		fmt.Fprintf(s.Out, "built %s\n", out.GatewayImage)
	}
	return exitOK
}

// buildGateway builds the gateway image from the context Write put in dir,
// with the docker CLI or podman's. The context is the Dockerfile (FROM
// scratch: nothing is pulled), the static binary and the CA bundle.
func buildGateway(ctx context.Context, s stdio, dir, image string) error {
	for _, name := range []string{"docker", "podman"} {
		cli, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		cmd := exec.CommandContext(ctx, cli, "build", "--tag", image, dir)
		cmd.Stdout, cmd.Stderr = s.Err, s.Err
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s build --tag %s %s: %w", name, image, dir, err)
		}
		return nil
	}
	return fmt.Errorf("build the gateway image: neither docker nor podman is on the PATH; install docker.io, or build it elsewhere with: docker build --tag %s %s", image, dir)
}

// composeInputs gathers the plan and the renderer's options: the policy
// resolved for an engine-run sandbox, the agent, the output directory, the
// gateway key (kept from an existing project), this binary and the CA bundle.
func composeInputs(s stdio, f composeFlags, cmd []string) (*policy.Plan, compose.Options, error) {
	var o compose.Options
	cwd, err := os.Getwd()
	if err != nil {
		return nil, o, err
	}
	p, _, err := f.policy.load(cwd, s.Getenv)
	if err != nil {
		return nil, o, err
	}
	h, err := host.Capture()
	if err != nil {
		return nil, o, err
	}
	plan, err := policy.Resolve(p, compose.PlanArgv, compose.PlanHost(h), "")
	if err != nil {
		return nil, o, err
	}
	o.Command, o.Image = cmd, f.image
	if f.agent != "" {
		if len(cmd) > 0 {
			return nil, o, &compose.InputError{
				Field: "--agent", Msg: "give --agent or a command after --, not both",
				Fix: "a command starting with codex or claude is adapted as --agent is",
			}
		}
		if o.Command, err = compose.AgentCommand(f.agent); err != nil {
			return nil, o, err
		}
	}
	if f.out == "" {
		f.out = filepath.Join(cwd, "agentbox-compose")
	}
	if o.OutDir, err = compose.ResolveOutDir(f.out); err != nil {
		return nil, o, err
	}
	if o.Token = compose.ExistingToken(o.OutDir); o.Token == "" {
		if o.Token, err = netpolicy.NewToken(); err != nil {
			return nil, o, err
		}
	}
	if o.GatewayBinary, err = selfBinary(); err != nil {
		return nil, o, err
	}
	if o.CABundle, err = compose.HostCABundle(); err != nil {
		return nil, o, err
	}
	if os.Geteuid() != 0 { // the key files this user creates must be the gateway's to read
		o.GatewayUID, o.GatewayGID = uint32(os.Geteuid()), uint32(os.Getegid())
	}
	return plan, o, nil
}

func selfBinary() ([]byte, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the agentbox binary for the gateway image: %w", err)
	}
	return os.ReadFile(self)
}

// recordCompose appends the self-audit, or the --check, to the evidence
// ledger as an audit record; a ledger that cannot be written is a warning,
// as for agentbox audit.
func recordCompose(s stdio, start time.Time, args []string, r audit.Report, out *compose.Output, code int, note string) {
	rec := launcher.AuditRecord(append([]string{"agentbox", "compose"}, args...), start, r, code, note)
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
	if err := launcher.AppendRecord(s.Getenv, rec); err != nil {
		fmt.Fprintf(s.Err, "agentbox compose: warning: ledger: %v\n", err)
	}
}

// composeFail prints err and maps it to an exit code (launcher.KindOf):
// bad input and files in the way are 2, an untrusted workspace policy 3,
// anything the host could not do 4.
func composeFail(s stdio, err error) int { return fail(s, "compose", err) }
