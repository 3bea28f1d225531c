package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/agentbox/agentbox/selftest"
)

// suiteResult is what `abbench suite` prints: the wall time of each pass
// over the whole probe catalog, in the order run.
type suiteResult struct {
	Probes    int            `json:"probes"`
	UID       int            `json:"uid"`
	PassNS    []int64        `json:"pass_ns"`
	Decisions map[string]int `json:"decisions"`
}

// runSuite runs inside a sandbox, as the agent: it times n passes of the
// probe catalog in this process, with the zero configuration (no canaries,
// route lookups only), the way BenchmarkSuite does on the host.
func runSuite(args []string) error {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	n := fs.Int("n", 20, "passes over the catalog")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := &selftest.InitConfig{Version: selftest.ProtocolVersion, RunID: "bench"}
	e := selftest.NewEnv(cfg)
	res := suiteResult{UID: os.Getuid(), Decisions: map[string]int{}}
	for i := range *n {
		count := 0
		start := time.Now()
		err := selftest.Run(context.Background(), e, func(r selftest.Result) error {
			count++
			if i == 0 {
				res.Decisions[string(r.Decision)]++
			}
			return nil
		})
		res.PassNS = append(res.PassNS, int64(time.Since(start)))
		if err != nil {
			return err
		}
		res.Probes = count
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// runSelfTest measures the probe suite inside real sandboxes: `abbench
// suite` started by `agentbox run` in the benchmark workspace, and n runs
// of `agentbox selftest` (wall time and its traced self-test step).
func runSelfTest(args []string) error {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	agentbox := fs.String("agentbox", "bin/agentbox", "the agentbox binary")
	work := fs.String("work", "", "scratch directory of `abbench launch` (its ws/ is the workspace)")
	n := fs.Int("n", 10, "agentbox selftest runs")
	passes := fs.Int("passes", 20, "passes of the catalog inside one sandbox")
	rows := fs.String("rows", "", "append summary rows to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *work == "" {
		return errors.New("-work is required")
	}
	abs, err := filepath.Abs(*agentbox)
	if err != nil {
		return err
	}
	*agentbox = abs
	ws := filepath.Join(*work, "ws")
	env := append(os.Environ(), "AGENTBOX_TRACE=1", "AGENTBOX_STATE_DIR="+filepath.Join(*work, "agentbox-state"))
	in, err := suiteInSandbox(*agentbox, ws, env, *passes)
	if err != nil {
		return err
	}
	st, err := selfTestRuns(*agentbox, ws, env, *n)
	if err != nil {
		return err
	}
	fmt.Print(in.text + st.text)
	return appendRows(*rows, append(in.rows, st.rows...)...)
}

// suiteInSandbox copies this binary into the workspace (which the sandbox
// sees at the same path) and runs `abbench suite` as the agent.
func suiteInSandbox(agentbox, ws string, env []string, passes int) (launchReport, error) {
	self := filepath.Join(ws, "abbench")
	if err := copyExecutable(self); err != nil {
		return launchReport{}, err
	}
	cmd := exec.Command(agentbox, "run", "--", self, "suite", "-n", fmt.Sprint(passes))
	cmd.Dir, cmd.Env = ws, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return launchReport{}, fmt.Errorf("agentbox run -- abbench suite: %w: %s", err, lastLine(stderr.String()))
	}
	var res suiteResult
	if err := json.Unmarshal(out, &res); err != nil {
		return launchReport{}, fmt.Errorf("abbench suite printed %q: %w", out, err)
	}
	return suiteReport(res), nil
}

func suiteReport(res suiteResult) launchReport {
	var s sample
	for _, ns := range res.PassNS {
		s = append(s, time.Duration(ns))
	}
	var first time.Duration
	if len(s) > 0 {
		first = s[0]
	}
	text := fmt.Sprintf("probe suite inside a sandbox (agentbox run -- abbench suite, uid %d, %d probes, %d passes in one process):\n", res.UID, res.Probes, len(s))
	text += fmt.Sprintf("  first pass %s, median %s, p90 %s; first-pass decisions %v\n", ms(first), ms(s.median()), ms(s.pct(0.9)), res.Decisions)
	return launchReport{text: text, rows: []row{
		{Metric: "probe suite in sandbox, in-process median", Agentbox: ms(s.median()), Value: ms(s.median()), Target: "< 100 ms", Met: met(s.median() < 100*time.Millisecond)},
		{Metric: "probe suite in sandbox, in-process first pass", Agentbox: ms(first), Value: ms(first), Target: "< 100 ms", Met: met(first < 100*time.Millisecond)},
	}}
}

// selfTestRuns times n runs of `agentbox selftest`.
func selfTestRuns(agentbox, ws string, env []string, n int) (launchReport, error) {
	var wall, step sample
	fails := 0
	for range n {
		cmd := exec.Command(agentbox, "selftest")
		cmd.Dir, cmd.Env, cmd.Stdout = ws, env, io.Discard
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.ExitCode() == 1:
			fails++ // a probe failed: the time still counts, the verdict is reported
		case err != nil:
			return launchReport{}, fmt.Errorf("agentbox selftest: %w: %s", err, lastLine(stderr.String()))
		}
		wall = append(wall, d)
		step = append(step, stepTimes(parseTrace(stderr.String()), map[string]bool{"self-test": true}))
	}
	text := fmt.Sprintf("agentbox selftest (%d runs, %d with verdict FAIL): wall median %s (IQR %s); its self-test step median %s\n", n, fails, ms(wall.median()), ms(wall.spread()), ms(step.median()))
	return launchReport{text: text, rows: []row{
		{Metric: "agentbox selftest, wall", Agentbox: ms(wall.median()), Value: ms(wall.median()), Met: "-"},
		{Metric: "probe suite in sandbox, selftest's step", Agentbox: ms(step.median()), Value: ms(step.median()), Target: "< 100 ms", Met: met(step.median() < 100*time.Millisecond)},
	}}, nil
}

// copyExecutable copies the running binary to dst, mode 0755.
func copyExecutable(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // whatever the umask
		return err
	}
	return os.Rename(tmp, dst)
}
