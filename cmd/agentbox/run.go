package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/agentbox/agentbox/launcher"
)

func init() {
	register(command{name: "run", summary: "run a command in a verified sandbox around the workspace", run: runRun})
}

func runRun(ctx context.Context, s stdio, args []string) int {
	var f launchFlags
	fs := newFlags(s, "run", "[flags] -- CMD [ARG...]")
	f.policy.register(fs)
	f.registerEvidence(fs)
	fs.BoolVar(&f.json, "json", false, "machine-readable: no notes on stderr, the evidence only on --evidence (which it needs)")
	fs.BoolVar(&f.rawTerminal, "raw-terminal", false, "pass the agent's output to your terminal unfiltered (clipboard, title and other OSC, DCS, APC sequences included)")
	f.registerSelfTest(fs)
	f.registerEngine(fs)
	_, cmd, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(cmd) == 0 {
		return fail(s, "run", usagef("no command; give one after --, for example: agentbox run -- sh"))
	}
	cfg, err := f.config(s)
	if err == nil && launcher.EngineElsewhere(cfg) != nil {
		return launcher.ExecHelper(append([]string{"run"}, args...), s.In, s.Out, s.Err)
	}
	if err != nil {
		return fail(s, "run", err)
	}
	cfg.Argv = cmd
	launcher.PaceCollector()
	res, err := launcher.Run(ctx, cfg)
	if err != nil {
		return fail(s, "run", err)
	}
	return res.ExitCode
}

// launchFlags are the flags of the subcommands that build a sandbox.
type launchFlags struct {
	policy                     policyFlags
	json, rawTerminal          bool
	evidence                   string
	allowUnknown, probeTargets []string
	engine, address            string
}

func (f *launchFlags) registerEngine(fs *pflag.FlagSet) {
	fs.StringVar(&f.engine, "engine", "", "what runs the sandbox: runtime (the OCI runtime's command line, the default) or containerd (docs/containerd.md)")
	fs.StringVar(&f.address, "address", "", "with --engine containerd, the daemon's `SOCKET` (default /run/containerd/containerd.sock)")
}

func (f *launchFlags) registerEvidence(fs *pflag.FlagSet) {
	fs.StringVar(&f.evidence, "evidence", "", "write the evidence (probe results, then the record) as JSON lines to `FD|FILE`: a descriptor of 3 or more that agentbox inherited, or a new file (mode 0600)")
}

func (f *launchFlags) registerSelfTest(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.allowUnknown, "allow-unknown", nil, "accept an UNKNOWN result of a probe: PROBE=reason (repeatable; recorded)")
	fs.StringArrayVar(&f.probeTargets, "probe-target", nil, "aim network probes at a test host: KIND=IP:PORT, KIND internet, dns, metadata or gateway (repeatable)")
}

// config maps the flags to the launcher's Config. A malformed policy or
// self-test flag fails as the policy step of the pipeline would.
func (f *launchFlags) config(s stdio) (launcher.Config, error) {
	cfg := launcher.Config{
		Stdin: s.In, Stdout: s.Out, Stderr: s.Err, Getenv: s.Getenv,
		JSON: f.json, Evidence: f.evidence, RawTerminal: f.rawTerminal,
	}
	cwd, err := os.Getwd()
	if err == nil {
		cfg.Policy, cfg.Sources, err = f.policy.Inputs(cwd, s.Getenv)
	}
	if err == nil {
		cfg.AllowUnknown, cfg.Targets, err = launcher.ParseSelfTestFlags(f.allowUnknown, f.probeTargets)
	}
	if err != nil {
		return cfg, launcher.StepError("policy", err)
	}
	cfg.Policy.Engine, cfg.Policy.Address = f.engine, f.address // the launcher opens it from the merged policy
	return cfg, nil
}
