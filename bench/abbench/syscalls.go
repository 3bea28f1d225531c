package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// noListenerEnv is launcher.NoListenerEnv: the launcher runs the plain
// seccomp filter, without the denial log's notification listener.
const noListenerEnv = "AGENTBOX_BENCH_NO_LISTENER"

// execTimes is what `abbench exectime` prints: the wall time and the CPU
// time (user and system, the command and its children) of each run of the
// command after one unreported warm-up run. On a loaded machine the wall
// time is mostly the other processes'; the CPU time is the command's own,
// and the seccomp filter's work is in its system part.
type execTimes struct {
	NS    []int64 `json:"ns"`
	CPUNS []int64 `json:"cpu_ns"`
}

// runExecTime runs inside a sandbox, as the agent: it runs the command
// after "--" once to warm the caches, then n times, and prints the times.
// A run that fails ends it with the command's output.
func runExecTime(args []string) error {
	fs := flag.NewFlagSet("exectime", flag.ContinueOnError)
	n := fs.Int("n", 3, "timed runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return errors.New("usage: abbench exectime [-n N] -- CMD [ARGS...]")
	}
	var res execTimes
	for i := range *n + 1 {
		cmd := exec.Command(argv[0], argv[1:]...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, lastLine(out.String()))
		}
		if i > 0 {
			res.NS = append(res.NS, int64(d))
			res.CPUNS = append(res.CPUNS, int64(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()))
		}
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// workload is one syscall-heavy command, run in the benchmark workspace.
type workload struct {
	name string
	argv []string
}

// runSyscalls measures what the seccomp notification listener costs a
// syscall-heavy workload inside `agentbox run`: each workload is timed
// inside the sandbox (abbench exectime, so that the launch is not in the
// number) with the listener and with the plain filter
// (AGENTBOX_BENCH_NO_LISTENER=1), the two interleaved and alternating
// which goes first. Each run's record is checked to say which it was.
func runSyscalls(args []string) error {
	fs := flag.NewFlagSet("syscalls", flag.ContinueOnError)
	agentbox := fs.String("agentbox", "bin/agentbox", "the agentbox binary")
	work := fs.String("work", "", "scratch directory (its ws-syscalls/ is the workspace)")
	rounds := fs.Int("rounds", 6, "A/B rounds: one run with the listener and one without each")
	perRun := fs.Int("n", 3, "timed runs of the workload inside each sandbox")
	files := fs.Int("files", 30000, "files in the generated git tree")
	funcs := fs.Int("funcs", 400, "functions in the generated C file")
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
	ws := filepath.Join(*work, "ws-syscalls")
	if err := makeTree(ws, *files, *funcs); err != nil {
		return err
	}
	if err := copyExecutable(filepath.Join(ws, "abbench")); err != nil {
		return err
	}
	loads := []workload{
		{fmt.Sprintf("git status, %d files", *files), []string{"git", "-c", "safe.directory=*", "-c", "core.untrackedCache=false", "-c", "core.fsmonitor=false", "status", "--porcelain"}},
		{fmt.Sprintf("gcc -O2 -c, %d functions", *funcs), []string{"gcc", "-O2", "-c", "bench.c", "-o", "bench.o"}},
	}
	env := append(os.Environ(), "AGENTBOX_STATE_DIR="+filepath.Join(*work, "agentbox-state"))
	var out []row
	for _, w := range loads {
		on, off, err := abSyscalls(abs, ws, env, w, *rounds, *perRun)
		if err != nil {
			return err
		}
		fmt.Printf("%s inside agentbox run (%d rounds x %d runs each, interleaved):\n", w.name, *rounds, *perRun)
		for _, k := range []struct {
			name string
			on   sample
			off  sample
			pair []float64
		}{{"wall", on.wall, off.wall, pairedRatios(on.wallRounds, off.wallRounds)}, {"CPU ", on.cpu, off.cpu, pairedRatios(on.cpuRounds, off.cpuRounds)}} {
			fmt.Printf("  %s  with the listener median %s (IQR %s), plain filter median %s (IQR %s)\n", k.name, ms(k.on.median()), ms(k.on.spread()), ms(k.off.median()), ms(k.off.spread()))
			fmt.Printf("        ratio listener/plain %s; per round %s (median %.2f)\n", ratio(k.on.median(), k.off.median()), fmtRatios(k.pair), medianFloat(k.pair))
			r := medianFloat(k.pair)
			out = append(out, row{
				Metric: fmt.Sprintf("%s, %s time, seccomp listener / plain filter (median of the rounds' ratios)", w.name, strings.TrimSpace(k.name)), Agentbox: ms(k.on.median()), Baseline: ms(k.off.median()),
				Value: fmt.Sprintf("%.2f", r), Target: "same (0.95-1.05)", Met: met(r >= 0.95 && r <= 1.05),
			})
		}
	}
	return appendRows(*rows, out...)
}

// side is one side of the A/B: every timed run, and each round's medians.
type side struct {
	wall, cpu             sample
	wallRounds, cpuRounds []time.Duration
}

// abSyscalls runs w rounds times with the listener and without,
// alternating the order, and returns the times of each side.
func abSyscalls(agentbox, ws string, env []string, w workload, rounds, perRun int) (on, off side, err error) {
	for i := range rounds {
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, listener := range order {
			wall, cpu, err := timeInSandbox(agentbox, ws, env, w, perRun, listener)
			if err != nil {
				return side{}, side{}, err
			}
			s := &off
			if listener {
				s = &on
			}
			s.wall, s.cpu = append(s.wall, wall...), append(s.cpu, cpu...)
			s.wallRounds, s.cpuRounds = append(s.wallRounds, wall.median()), append(s.cpuRounds, cpu.median())
		}
	}
	return on, off, nil
}

// pairedRatios are each round's ratio of its two medians: the two sides
// of a round ran back to back, so a load that drifts over minutes cancels.
func pairedRatios(on, off []time.Duration) []float64 {
	var out []float64
	for i := range min(len(on), len(off)) {
		out = append(out, float64(on[i])/float64(max(off[i], 1)))
	}
	return out
}

func fmtRatios(rs []float64) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%.2f", r))
	}
	return strings.Join(out, " ")
}

func medianFloat(rs []float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	c := slices.Clone(rs)
	slices.Sort(c)
	if len(c)%2 == 0 {
		return (c[len(c)/2-1] + c[len(c)/2]) / 2
	}
	return c[len(c)/2]
}

// timeInSandbox runs `agentbox run -- ./abbench exectime -- WORKLOAD` and
// checks from the run's record that the listener was on, or off, as asked.
func timeInSandbox(agentbox, ws string, env []string, w workload, n int, listener bool) (wall, cpu sample, err error) {
	evidence := filepath.Join(filepath.Dir(ws), "syscalls-evidence.jsonl")
	_ = os.Remove(evidence)
	args := append([]string{"run", "--evidence", evidence, "--", "./abbench", "exectime", "-n", fmt.Sprint(n), "--"}, w.argv...)
	cmd := exec.Command(agentbox, args...)
	cmd.Dir, cmd.Env = ws, env
	if !listener {
		cmd.Env = append(cmd.Env, noListenerEnv+"=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("agentbox run -- %s: %w: %s", strings.Join(w.argv, " "), err, lastLine(stderr.String()))
	}
	logged, err := seccompLogged(evidence)
	if err != nil {
		return nil, nil, err
	}
	if logged != listener {
		return nil, nil, fmt.Errorf("asked for the listener %v, the run's record says seccomp logged=%v", listener, logged)
	}
	var res execTimes
	if err := json.Unmarshal(stdout, &res); err != nil {
		return nil, nil, fmt.Errorf("abbench exectime printed %q: %w", stdout, err)
	}
	for i, ns := range res.NS {
		wall = append(wall, time.Duration(ns))
		if i < len(res.CPUNS) {
			cpu = append(cpu, time.Duration(res.CPUNS[i]))
		}
	}
	return wall, cpu, nil
}

// seccompLogged reads the record on the evidence channel: whether its
// seccomp layer was logged, that is whether the listener ran.
func seccompLogged(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Event  string `json:"event"`
			Record struct {
				Layers []struct {
					Layer  string `json:"layer"`
					Logged bool   `json:"logged"`
				} `json:"denial_layers"`
			} `json:"record"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Event != "record" {
			continue
		}
		for _, l := range ev.Record.Layers {
			if l.Layer == "seccomp" {
				return l.Logged, nil
			}
		}
		return false, errors.New("the run's record has no seccomp layer")
	}
	return false, fmt.Errorf("%s holds no record", path)
}

// makeTree generates the workspace once: a committed git tree of files
// files, 100 to a directory, and a C file of funcs functions.
func makeTree(ws string, files, funcs int) error {
	if _, err := os.Stat(filepath.Join(ws, ".git")); err == nil {
		return nil
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	for i := range files {
		dir := filepath.Join(ws, "src", fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), fmt.Appendf(nil, "file %d\n", i), 0o644); err != nil {
			return err
		}
	}
	var c strings.Builder
	for i := range funcs {
		fmt.Fprintf(&c, "int f%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += (i * %d) ^ (s >> 3); return s; }\n", i, i+1)
	}
	if err := os.WriteFile(filepath.Join(ws, "bench.c"), []byte(c.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("abbench\nabbench.tmp\nbench.o\n"), 0o644); err != nil {
		return err
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, lastLine(string(out)))
		}
		return nil
	}
	for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "tree"}} {
		if err := git(a...); err != nil {
			return err
		}
	}
	return nil
}
