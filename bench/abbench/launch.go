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
	agentbox, baseline         time.Duration
	steps                      []step
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
	owner := fs.String("owner", "1000:1000", "uid:gid that owns the benchmark workspace (a developer's project, not root's)")
	fs.StringVar(&b.rows, "rows", "", "append summary rows to this file")
	fs.DurationVar(&b.timeout, "timeout", 30*time.Second, "limit for one launch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if b.label == "" {
		b.label = b.runtime
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
	if !ok || err1 != nil || err2 != nil || uid <= 0 || gid <= 0 {
		return [2]int{}, fmt.Errorf("-owner %q: want UID:GID of an ordinary user (not 0)", s)
	}
	return [2]int{uid, gid}, nil
}

// setup makes the workspace, the baseline bundle and a state directory
// for the runtime, then tries each side once to learn whether it works.
func (b *launchBench) setup() error {
	var err error
	if b.rtPath, err = exec.LookPath(b.runtime); err != nil {
		return fmt.Errorf("%s not found; install it (apt-get install %s)", b.runtime, b.runtime)
	}
	b.ws = filepath.Join(b.work, "ws")
	b.bundle = filepath.Join(b.work, "bundle-"+b.runtime)
	b.state = filepath.Join(b.work, "state-"+b.runtime)
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
	base, created, changes, err := baselineSpec(s, []string{"/usr/bin/true"}, "/agentbox-bench/"+b.runtime, standins)
	if err != nil {
		return err
	}
	b.changes = changes
	if err := writeBaseline(b.bundle, base, created); err != nil {
		return fmt.Errorf("write baseline bundle: %w", err)
	}
	if _, _, err := b.runAgentbox(); err != nil {
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
				p.agentbox, p.steps, err = b.runAgentbox()
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

// runAgentbox times one `agentbox run -- true` with step tracing on.
func (b *launchBench) runAgentbox() (time.Duration, []step, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.agentbox, "run", "--runtime", b.runtime, "--", "true")
	cmd.Dir = b.ws
	cmd.Env = append(os.Environ(), "AGENTBOX_TRACE=1", "AGENTBOX_STATE_DIR="+filepath.Join(b.work, "agentbox-state"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, nil, fmt.Errorf("agentbox run -- true: %w: %s", err, lastLine(stderr.String()))
	}
	return d, parseTrace(stderr.String()), nil
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
	run.Stderr = &stderr
	del := exec.CommandContext(ctx, b.rtPath, "--root", b.state, "delete", "--force", id)
	start := time.Now()
	err := run.Run()
	// Its status is not checked: a runtime may call deleting a container
	// that is already gone an error. checkClean proves after the loop that
	// nothing was left.
	_ = del.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s run: %w: %s", b.runtime, err, lastLine(stderr.String()))
	}
	return d, nil
}

// checkClean verifies that the baseline left no container behind.
func (b *launchBench) checkClean() error {
	if b.baselineErr != "" {
		return nil
	}
	out, err := exec.Command(b.rtPath, "--root", b.state, "list", "--quiet").Output()
	if err != nil {
		return fmt.Errorf("%s list: %w", b.runtime, err)
	}
	if left := strings.TrimSpace(string(out)); left != "" {
		return fmt.Errorf("the baseline left containers behind: %s", left)
	}
	return nil
}

// timeCmd times a command whose outcome does not matter, only its cost.
func timeCmd(name string, args ...string) time.Duration {
	start := time.Now()
	_ = exec.Command(name, args...).Run()
	return time.Since(start)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
