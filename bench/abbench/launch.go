package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// launchBench is one A/B comparison: `agentbox run -- true` against the
// runtime running /usr/bin/true on the equivalent baseline bundle.
type launchBench struct {
	agentbox string
	runtime  string // name as agentbox takes it: runc or crun
	label    string // how the report names this comparison
	rtPath   string
	n        int
	warmup   int
	work     string // scratch directory: workspace, bundle, state
	owner    [2]int // uid and gid of the workspace
	rows     string
	timeout  time.Duration
	// address, when set, is a containerd daemon's socket: agentbox runs
	// with --engine containerd on it, and the baseline is a bare `ctr run`
	// of the same bundle (--rootfs --config) against the same daemon.
	address string
	// baseRuntime is the baseline's runtime (default: runtime): crun's
	// target is against a bare runc run. target is the ratio to meet.
	baseRuntime string
	target      float64

	ws, bundle, state string
	changes           []string
	// agentboxErr and baselineErr say why a side could not run at all.
	agentboxErr, baselineErr string
}

// pair holds one iteration of both sides, and of the calibration
// commands: one runtime CLI call that does nothing (`RUNTIME state` of no
// container), the agentbox process alone (`agentbox help`) and the
// agentbox-init process alone (`agentbox-init --list`).
type pair struct {
	agentbox, baseline time.Duration
	steps              []step
	parts              []step // of the steps (parseParts)
	// cpu is the user and system time of agentbox and of the processes it
	// waited for (the runtime's, the sandbox's, which it reaps as their
	// subreaper): what a loaded machine disturbs far less than wall time.
	cpu                        time.Duration
	rtCall, abStart, initStart time.Duration
}

func runLaunch(args []string) error {
	b := &launchBench{}
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	fs.StringVar(&b.agentbox, "agentbox", "bin/agentbox", "the agentbox binary (make build)")
	fs.StringVar(&b.runtime, "runtime", "runc", "OCI runtime: runc or crun")
	fs.StringVar(&b.label, "label", "", "name of this comparison in the report (default: the runtime)")
	fs.IntVar(&b.n, "n", 30, "measured iterations of each side, interleaved")
	fs.IntVar(&b.warmup, "warmup", 3, "iterations of each side run first and not measured")
	fs.StringVar(&b.work, "work", "", "scratch directory (required)")
	owner := fs.String("owner", "1000:1000", "uid:gid that owns the benchmark workspace (a developer's project; 0:0 measures the grant of a root-owned one)")
	fs.StringVar(&b.rows, "rows", "", "append summary rows to this file")
	fs.DurationVar(&b.timeout, "timeout", 30*time.Second, "limit for one launch")
	fs.StringVar(&b.baseRuntime, "baseline-runtime", "", "the baseline's OCI runtime (default: -runtime)")
	fs.Float64Var(&b.target, "target", 1.25, "the ratio agentbox / baseline to meet")
	fs.StringVar(&b.address, "address", "", "containerd `SOCKET`: compare agentbox run --engine containerd with a bare ctr run of the bundle on that daemon")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if b.label == "" {
		b.label = b.runtime
	}
	if b.baseRuntime == "" {
		b.baseRuntime = b.runtime
	}
	if b.work == "" || b.n < 1 {
		return errors.New("launch: -work is required and -n must be at least 1")
	}
	var err error
	if b.owner, err = parseOwner(*owner); err != nil {
		return err
	}
	if b.agentbox, err = filepath.Abs(b.agentbox); err != nil {
		return err
	}
	if err := b.setup(); err != nil {
		return fmt.Errorf("launch %s: %w", b.runtime, err)
	}
	pairs, err := b.loop()
	if err != nil {
		return fmt.Errorf("launch %s: %w", b.runtime, err)
	}
	rep := b.report(pairs)
	fmt.Print(rep.text)
	if err := appendRows(b.rows, rep.rows...); err != nil {
		return err
	}
	// A baseline the host cannot run is reported and is not an error (crun
	// on a hybrid cgroup host); agentbox failing is a failure of what is
	// measured.
	if b.agentboxErr != "" {
		return fmt.Errorf("launch %s: agentbox run failed: %s", b.label, b.agentboxErr)
	}
	return nil
}

func parseOwner(s string) ([2]int, error) {
	u, g, ok := strings.Cut(s, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return [2]int{}, fmt.Errorf("-owner %q: want UID:GID (0:0 for a root-owned workspace, which the launch grants to the agent)", s)
	}
	return [2]int{uid, gid}, nil
}

// setup makes the workspace, the baseline bundle and a state directory
// for the runtime, then tries each side once to learn whether it works.
func (b *launchBench) setup() error {
	var err error
	for _, rt := range []string{b.runtime, b.baseRuntime} {
		if b.rtPath, err = exec.LookPath(rt); err != nil {
			return fmt.Errorf("%s not found; install it (apt-get install %s)", rt, rt)
		}
	}
	b.ws = filepath.Join(b.work, "ws")
	b.bundle = filepath.Join(b.work, "bundle-"+b.baseRuntime)
	b.state = filepath.Join(b.work, "state-"+b.baseRuntime)
	if err := os.MkdirAll(b.ws, 0o755); err != nil {
		return err
	}
	if err := os.Chown(b.ws, b.owner[0], b.owner[1]); err != nil {
		return err
	}
	s, err := b.agentboxSpec()
	if err != nil {
		return err
	}
	standins := filepath.Join(b.work, "standins-"+b.runtime)
	base, created, changes, err := baselineSpec(s, []string{"/usr/bin/true"}, "/agentbox-bench/"+b.baseRuntime, standins)
	if err != nil {
		return err
	}
	b.changes = changes
	if err := writeBaseline(b.bundle, base, created); err != nil {
		return fmt.Errorf("write baseline bundle: %w", err)
	}
	if b.address != "" {
		if err := writeCtrConfig(b.bundle); err != nil {
			return fmt.Errorf("write the ctr baseline's spec: %w", err)
		}
	}
	if _, err := b.runAgentbox(); err != nil {
		b.agentboxErr = err.Error()
	}
	b.probeBaseline()
	return nil
}

// agentboxSpec is what `agentbox spec` prints for this workspace.
func (b *launchBench) agentboxSpec() (*specs.Spec, error) {
	cmd := exec.Command(b.agentbox, "spec", "--runtime", b.runtime, "-w", b.ws, "--", "/usr/bin/true")
	cmd.Dir = b.ws
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("agentbox spec: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var s specs.Spec
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, fmt.Errorf("agentbox spec: %w", err)
	}
	return &s, nil
}

// probeBaseline runs the baseline once, to learn whether the runtime can
// run it on this host at all.
func (b *launchBench) probeBaseline() {
	if _, err := b.runBaseline("probe"); err != nil {
		b.baselineErr = err.Error()
	}
}

// loop runs warmup then n pairs, alternating which side goes first so
// that neither always runs on a machine the other just warmed or loaded.
func (b *launchBench) loop() ([]pair, error) {
	var pairs []pair
	if b.agentboxErr != "" && b.baselineErr != "" {
		return nil, nil
	}
	for i := range b.warmup + b.n {
		var p pair
		var err error
		sides := []func() error{
			func() error {
				if b.agentboxErr != "" {
					return nil
				}
				// Only the agentbox side: the baseline may have run first.
				a, err := b.runAgentbox()
				p.agentbox, p.cpu, p.steps, p.parts = a.agentbox, a.cpu, a.steps, a.parts
				return err
			},
			func() error {
				if b.baselineErr != "" {
					return nil
				}
				p.baseline, err = b.runBaseline(strconv.Itoa(i))
				return err
			},
		}
		if i%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		sides = append(sides,
			func() error { p.rtCall = timeCmd(b.rtPath, "--root", b.state, "state", "abbench-none"); return nil },
			func() error { p.abStart = timeCmd(b.agentbox, "help"); return nil },
			func() error {
				p.initStart = timeCmd(filepath.Join(filepath.Dir(b.agentbox), "agentbox-init"), "--list")
				return nil
			},
		)
		for _, side := range sides {
			if err := side(); err != nil {
				return nil, fmt.Errorf("iteration %d: %w", i, err)
			}
		}
		if i >= b.warmup {
			pairs = append(pairs, p)
		}
	}
	return pairs, b.checkClean()
}

// runAgentbox times one `agentbox run -- true` with step tracing on: a
// pair with its agentbox side filled in.
func (b *launchBench) runAgentbox() (pair, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	args := []string{"run", "--runtime", b.runtime}
	if b.address != "" {
		args = append(args, "--engine", "containerd", "--address", b.address)
	}
	cmd := exec.CommandContext(ctx, b.agentbox, append(args, "--", "true")...)
	cmd.Dir = b.ws
	cmd.Env = append(os.Environ(), "AGENTBOX_TRACE=1", "AGENTBOX_STATE_DIR="+filepath.Join(b.work, "agentbox-state"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return pair{}, fmt.Errorf("agentbox run -- true: %w: %s", err, untraced(stderr.String()))
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return pair{agentbox: d, cpu: cpu, steps: parseTrace(stderr.String()), parts: parseParts(stderr.String())}, nil
}

// runBaseline times `RUNTIME run` plus `RUNTIME delete --force` of the
// baseline bundle. run waits for the process and removes the container
// itself; delete then finds nothing, cheaply, as it does after a clean run.
func (b *launchBench) runBaseline(tag string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	id := fmt.Sprintf("abbench-%d-%s", os.Getpid(), tag)
	var stderr bytes.Buffer
	run := exec.CommandContext(ctx, b.rtPath, "--root", b.state, "run", "--bundle", b.bundle, id)
	del := exec.CommandContext(ctx, b.rtPath, "--root", b.state, "delete", "--force", id)
	if b.address != "" {
		run, del = b.ctrRun(ctx, id)
	}
	run.Stderr = &stderr
	start := time.Now()
	err := run.Run()
	// Its status is not checked: a runtime may call deleting a container
	// that is already gone an error. checkClean proves after the loop that
	// nothing was left.
	_ = del.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: %s", b.baselineName(), err, lastLine(stderr.String()))
	}
	return d, nil
}

// ctrNamespace is the containerd namespace of the bare baseline, apart
// from agentbox's own.
const ctrNamespace = "agentbox-bench"

// ctrRun is the containerd baseline: `ctr run --rm` of the bundle's spec
// and root (no image, no snapshot, as agentbox's engine does it) on the
// same runtime binary, waiting for the task, then a `ctr containers rm`
// that finds nothing after a clean run.
func (b *launchBench) ctrRun(ctx context.Context, id string) (run, del *exec.Cmd) {
	ctr := []string{"--address", b.address, "--namespace", ctrNamespace}
	run = exec.CommandContext(ctx, "ctr", append(ctr, "run", "--rm", "--null-io", "--config", filepath.Join(b.bundle, ctrConfig),
		"--runc-binary", b.rtPath, id)...)
	del = exec.CommandContext(ctx, "ctr", append(ctr, "containers", "rm", id)...)
	return run, del
}

// ctrConfig is the baseline's spec for ctr: the bundle's, with the root
// as an absolute path (ctr's shim runs it from a bundle directory of its
// own, where a relative root would name nothing).
const ctrConfig = "config-ctr.json"

func writeCtrConfig(bundle string) error {
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return err
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	if s.Root != nil && !filepath.IsAbs(s.Root.Path) {
		s.Root.Path = filepath.Join(bundle, s.Root.Path)
	}
	if data, err = json.Marshal(&s); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(bundle, ctrConfig), data, 0o644)
}

// checkClean verifies that the baseline left no container behind.
func (b *launchBench) checkClean() error {
	if b.baselineErr != "" {
		return nil
	}
	list := exec.Command(b.rtPath, "--root", b.state, "list", "--quiet")
	if b.address != "" {
		list = exec.Command("ctr", "--address", b.address, "--namespace", ctrNamespace, "containers", "list", "--quiet")
	}
	out, err := list.Output()
	if err != nil {
		return fmt.Errorf("%s: list: %w", b.baselineName(), err)
	}
	if left := strings.TrimSpace(string(out)); left != "" {
		return fmt.Errorf("the baseline left containers behind: %s", left)
	}
	return nil
}

// baselineName says what the baseline runs.
func (b *launchBench) baselineName() string {
	rt := b.baseRuntime
	if rt == "" {
		rt = b.runtime
	}
	if b.address != "" {
		return "ctr run --rm (runc shim, " + rt + ")"
	}
	return rt + " run + " + rt + " delete"
}

// goal is the ratio to meet (-target; 1.25 unset).
func (b *launchBench) goal() float64 {
	if b.target == 0 {
		return 1.25
	}
	return b.target
}

// timeCmd times a command whose outcome does not matter, only its cost.
func timeCmd(name string, args ...string) time.Duration {
	start := time.Now()
	_ = exec.Command(name, args...).Run()
	return time.Since(start)
}

// untraced is what a failed launch printed besides its trace lines (init's
// own lines, if any, come before the launcher's last one).
func untraced(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(l, tracePrefix) && !strings.HasPrefix(l, "agentbox: residual ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
