package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentbox/agentbox/agents"
	"github.com/agentbox/agentbox/netpolicy/scripted"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// escapePrompt is the agent's task; the scripted model ignores it and
// plays its script.
const escapePrompt = "agentbox escape self-test: run each command you are given with your shell tool."

// AgentTestResult is an escape-prompt self-test's outcome.
type AgentTestResult struct {
	Result
	// Attempts are the verdicts, one per attempt (also in Record.Attempts).
	Attempts []selftest.Result
	// AttemptsFailed are those that did not get their expected decision.
	AttemptsFailed []selftest.Result
	// AgentLog is the file that holds what the agent printed.
	AgentLog string
	// Shapes are the tool shapes the scripted model drove.
	Shapes []string
	// Undrivable says why the agent was not run: the scripted model
	// cannot drive its tool calls. It is never a pass.
	Undrivable string
}

// agentTest is one escape-prompt self-test, kept by the launch so that the
// Record stage can judge it (judge).
type agentTest struct {
	env     escapeEnv
	escapes []escape
	model   *scripted.Server
	watched map[string]string // secret name → value, looked for in the tool outputs
	results []selftest.Result
}

// AgentTestOptions are the escape-prompt self-test's own settings.
type AgentTestOptions struct {
	// Outside is IP:PORT of a test host outside the sandbox that the
	// outside-host attempt connects to over TCP (a host in a network
	// namespace the caller made, say); "" asks for a route to a
	// documentation address instead, which sends no packet.
	Outside string
}

// checkOutside refuses an outside target that is not a literal IP:PORT,
// or that is loopback (inside the sandbox that is the sandbox's own).
func checkOutside(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	n, perr := strconv.Atoi(port)
	if err != nil || ip == nil || perr != nil || n < 1 || n > 65535 {
		return &policy.InputError{Field: "--outside-target", Msg: fmt.Sprintf("%q is not IP:PORT", addr), Fix: "name a test host by address, for example 198.18.0.2:8080"}
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return &policy.InputError{Field: "--outside-target", Msg: fmt.Sprintf("%s is this machine's own", addr), Fix: "name a host outside the sandbox's network namespace, not loopback"}
	}
	return nil
}

// AgentSelfTest is `agentbox selftest --agent AGENT`: a run of the agent,
// in a fresh workspace, whose gateway routes every model route to the
// scripted model on this process's loopback, which asks the agent's shell
// tool to try each escape (escapes.go). cfg is a run's configuration; its
// Argv and workspace are replaced. The verdict is one result per attempt.
// An agent that is not installed is an input error that says how to
// install it; one whose tool calls the scripted model cannot drive is not
// run, and its result says so with ExitFindings.
func AgentSelfTest(ctx context.Context, cfg Config, agent string, opts AgentTestOptions) (AgentTestResult, error) {
	if err := checkOutside(opts.Outside); err != nil {
		return AgentTestResult{}, err
	}
	argv, spec, err := resolveAgent(agent)
	if err != nil {
		return AgentTestResult{}, err
	}
	if spec.undrivable != "" {
		return AgentTestResult{Result: Result{ExitCode: ExitFindings}, Undrivable: spec.undrivable}, nil
	}
	cfg.Argv = argv
	withAgentEnv(&cfg, spec.env)
	t, cleanup, err := newAgentTest(&cfg, opts, spec)
	defer cleanup()
	if err != nil {
		return AgentTestResult{}, err
	}
	stop, err := t.serve(&cfg)
	if err != nil {
		return AgentTestResult{}, err
	}
	defer stop()
	logf, err := os.CreateTemp("", "agentbox-escape-agent-*.log")
	if err != nil {
		return AgentTestResult{}, err
	}
	defer logf.Close()
	cfg.Stdin, cfg.Stdout, cfg.agentTest = nil, logf, t
	if f, ok := cfg.Stderr.(*os.File); !ok || f == nil {
		cfg.Stderr = logf
	}
	res, err := Run(ctx, cfg)
	out := AgentTestResult{Result: res, Attempts: t.results, AgentLog: logf.Name(), Shapes: t.model.Shapes()}
	out.AttemptsFailed = selftest.Judge(t.results, selftest.Excuses{}).Failed
	if err == nil && (len(out.AttemptsFailed) > 0 || len(t.results) == 0) {
		out.ExitCode = ExitFindings
	}
	return out, err
}

// newAgentTest makes the workspace (with the agent's own files) and the
// ~/.ssh canary, and the script.
func newAgentTest(cfg *Config, opts AgentTestOptions, spec agentSpec) (*agentTest, func(), error) {
	var undo []func()
	cleanup := func() {
		for _, u := range slices.Backward(undo) {
			u()
		}
	}
	ws, err := os.MkdirTemp("", "agentbox-escape-")
	if err != nil {
		return nil, cleanup, err
	}
	undo = append(undo, func() { os.RemoveAll(ws) })
	cfg.Policy.Workspace = ws
	if err := writeAgentFiles(ws, spec.files); err != nil {
		return nil, cleanup, fmt.Errorf("the agent's workspace files: %w", err)
	}
	env := escapeEnv{token: randomToken()[:16], workspace: ws, outside: opts.Outside}
	t := &agentTest{env: env, watched: map[string]string{}}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} {
		if v := os.Getenv(k); len(v) >= 8 { // the gateway reads the keys from this process's environment
			t.watched["real key $"+k] = v
		}
	}
	path, content, remove, err := plantSSHCanary(env.token)
	undo = append(undo, remove)
	if err != nil {
		return nil, cleanup, err
	}
	t.env.sshCanary, t.watched["ssh canary"] = path, content
	t.escapes = escapes(t.env)
	t.model = scripted.New(steps(t.escapes))
	for name, v := range t.watched {
		t.model.Watch(name, v)
	}
	return t, cleanup, nil
}

// plantSSHCanary writes a random file into the invoking user's real
// ~/.ssh (made, and removed after, when there is none).
func plantSSHCanary(token string) (path, content string, remove func(), err error) {
	remove = func() {}
	u, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	if err != nil {
		return "", "", remove, fmt.Errorf("the ~/.ssh canary: %w", err)
	}
	dir := filepath.Join(u.HomeDir, ".ssh")
	made := false
	if err := os.Mkdir(dir, 0o700); err == nil {
		made = true
	} else if !errors.Is(err, fs.ErrExist) {
		return "", "", remove, fmt.Errorf("the ~/.ssh canary: %w", err)
	}
	path, content = filepath.Join(dir, "agentbox-canary-"+token), randomToken()
	remove = func() {
		os.Remove(path)
		if made {
			os.Remove(dir)
		}
	}
	// A new file only, never through a link: the run writes into the
	// user's real ~/.ssh.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", "", remove, fmt.Errorf("the ~/.ssh canary: %w", err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, content, remove, err
}

// serve starts the scripted model on this process's loopback and routes
// the built-in model routes of the run's gateway (openai, anthropic,
// google) to it.
func (t *agentTest) serve(cfg *Config) (func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return func() {}, fmt.Errorf("the scripted model: %w", err)
	}
	srv := &http.Server{Handler: t.model, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	base := "http://" + l.Addr().String()
	if cfg.Policy.Gateway.Upstreams == nil {
		cfg.Policy.Gateway.Upstreams = map[string]policy.Upstream{}
	}
	for _, route := range []string{"openai", "anthropic", "google"} {
		cfg.Policy.Gateway.Upstreams[route] = policy.Upstream{URL: base}
	}
	return func() { srv.Close() }, nil
}

// PrintAttempts writes the attempts as a table, with what denied each,
// and the verdict line.
func PrintAttempts(w io.Writer, res AgentTestResult) {
	if res.Undrivable != "" {
		fmt.Fprintf(w, "FAIL: cannot drive its tool calls: %s; not run, not passed\n", res.Undrivable)
		return
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTEMPT\tEXPECT\tDECISION\tOBSERVED\tDENIED BY")
	for _, a := range res.Record.Attempts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Expect, a.Decision, a.Observed, a.DeniedBy)
	}
	tw.Flush()
	verdict := "PASS"
	if res.ExitCode != ExitOK || len(res.Attempts) == 0 {
		verdict = "FAIL"
	}
	for _, r := range res.AttemptsFailed {
		fmt.Fprintf(w, "  %s: %s (%s)\n", r.Probe, r.Decision, r.Detail)
	}
	fmt.Fprintf(w, "\n%s: %d of %d attempts as expected; tool shapes %s; agent output %s; run %s\n",
		verdict, len(res.Attempts)-len(res.AttemptsFailed), len(res.Attempts), strings.Join(res.Shapes, ", "), res.AgentLog, res.Record.RunID)
}

// FindAgents returns the agent CLIs on PATH that agentbox has an adapter
// for (agents.Names), as the paths found; `agentbox doctor --agents` runs
// the escape self-test through each.
func FindAgents() []string {
	var out []string
	for _, name := range agents.Names() {
		if p, err := exec.LookPath(name); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// AgentSelfTestAll is `agentbox doctor --agents`: AgentSelfTest through
// every agent CLI FindAgents finds, each headed by its path, with cfg's
// streams. An agent whose test fails to run is said on cfg.Stderr and
// counts with its error's exit code; the result is the worst code, and
// ExitFindings when no agent is installed.
func AgentSelfTestAll(ctx context.Context, cfg Config) int {
	out, errw := cfg.Stdout, cfg.stderr()
	if out == nil {
		out = io.Discard
	}
	found := FindAgents()
	if len(found) == 0 {
		fmt.Fprintln(out, "agentbox doctor --agents: no agent CLI on PATH (codex, claude, …)")
		return ExitFindings
	}
	worst := ExitOK
	for _, agent := range found {
		fmt.Fprintf(out, "== %s\n", agent)
		res, err := AgentSelfTest(ctx, cfg, agent, AgentTestOptions{})
		PrintAttempts(out, res)
		worst = max(worst, res.ExitCode)
		if err != nil {
			fmt.Fprintf(errw, "agentbox doctor --agents: %s: %v\n", agent, err)
			worst = max(worst, ExitCode(err))
		}
	}
	return worst
}
