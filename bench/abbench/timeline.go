package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runTimeline times one launch's events on one clock: `perf record -k
// CLOCK_MONOTONIC` takes every process's exec and exit, and agentbox,
// with AGENTBOX_TRACE_CLOCK=1, stamps each trace line with the same
// clock. It prints, for each event, its median time since agentbox's
// exec over n launches and the gap to the event before it: where the
// launch waits, and on what.
//
//	abbench timeline -work DIR [-agentbox bin/agentbox] [-runtime runc] [-n 10]
func runTimeline(args []string) error {
	fs := flag.NewFlagSet("timeline", flag.ContinueOnError)
	bin := fs.String("agentbox", "bin/agentbox", "the agentbox binary (agentbox-init beside it)")
	runtime := fs.String("runtime", "runc", "OCI runtime: runc or crun")
	n := fs.Int("n", 10, "measured launches")
	warmup := fs.Int("warmup", 2, "launches run first and not measured")
	work := fs.String("work", "", "scratch directory (required)")
	owner := fs.String("owner", "1000:1000", "uid:gid that owns the benchmark workspace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *work == "" || *n < 1 {
		return errors.New("timeline: -work is required and -n must be at least 1")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		return errors.New("timeline: perf not found; install it (apt-get install linux-perf)")
	}
	own, err := parseOwner(*owner)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*bin)
	if err != nil {
		return err
	}
	ws := filepath.Join(*work, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if err := os.Chown(ws, own[0], own[1]); err != nil {
		return err
	}
	var launches []map[string]time.Duration
	for i := 0; i < *warmup+*n; i++ {
		ev, err := timeOneLaunch(perf, abs, *runtime, *work, ws)
		if err != nil {
			return fmt.Errorf("launch %d: %w", i, err)
		}
		if i >= *warmup {
			launches = append(launches, ev)
		}
	}
	fmt.Printf("agentbox run --runtime %s -- true, %d launches, events as medians of their time since agentbox's exec; load average at the end: %s\n", *runtime, len(launches), loadAverage())
	fmt.Print(timelineReport(launches))
	return nil
}

// timeOneLaunch runs one `agentbox run -- true` under perf and returns its
// events (timelineEvents).
func timeOneLaunch(perf, bin, runtime, work, ws string) (map[string]time.Duration, error) {
	data := filepath.Join(work, "timeline.perf")
	rec := exec.Command(perf, "record", "-q", "-k", "CLOCK_MONOTONIC", "-o", data,
		"-e", "sched:sched_process_exec", "-e", "sched:sched_process_exit", "--",
		bin, "run", "--runtime", runtime, "--", "true")
	rec.Dir = ws
	rec.Env = append(os.Environ(), "AGENTBOX_TRACE=1", "AGENTBOX_TRACE_CLOCK=1", "AGENTBOX_STATE_DIR="+filepath.Join(work, "agentbox-state"))
	var stderr bytes.Buffer
	rec.Stderr = &stderr
	if err := rec.Run(); err != nil {
		return nil, fmt.Errorf("perf record agentbox run -- true: %w: %s", err, untraced(stderr.String()))
	}
	out, err := exec.Command(perf, "script", "-i", data, "-F", "comm,pid,tid,time,event,trace").Output()
	if err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	return timelineEvents(string(out), stderr.String(), filepath.Base(bin), runtime)
}

// timelineEvents names the events of one launch, each as its time since
// agentbox's exec: the exec and exit of agentbox, the runtime, init, the
// agent's process (the /proc/self/exe that init executes, which runs the
// probes and then executes the agent; builds before it had a probe process
// and a starter, the first and second, named so) and the agent, from
// perf's records;
// and the end of each traced step or part ("STEP ends"), from agentbox's
// stamped trace lines. An event that happens twice keeps its first time.
func timelineEvents(perfScript, stderr, agentboxBase, runtime string) (map[string]time.Duration, error) {
	type rec struct {
		comm, pid, kind, filename string
		groupDead                 bool
		t                         float64
	}
	var recs []rec
	for _, line := range strings.Split(perfScript, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		t, err := strconv.ParseFloat(strings.TrimSuffix(f[2], ":"), 64)
		if err != nil {
			continue
		}
		r := rec{comm: f[0], pid: strings.SplitN(f[1], "/", 2)[0], t: t}
		switch {
		case strings.HasPrefix(f[3], "sched:sched_process_exec"):
			r.kind = "exec"
			for _, kv := range f[4:] {
				if v, ok := strings.CutPrefix(kv, "filename="); ok {
					r.filename = v
				}
			}
		case strings.HasPrefix(f[3], "sched:sched_process_exit"):
			r.kind, r.groupDead = "exit", slices.Contains(f[4:], "group_dead=true")
		default:
			continue
		}
		recs = append(recs, r)
	}
	var t0 float64
	var agentboxPid string
	for _, r := range recs {
		if r.kind == "exec" && filepath.Base(r.filename) == agentboxBase {
			t0, agentboxPid = r.t, r.pid
			break
		}
	}
	if agentboxPid == "" {
		return nil, fmt.Errorf("perf recorded no exec of %s", agentboxBase)
	}
	ev := map[string]time.Duration{}
	set := func(name string, t float64) {
		if _, ok := ev[name]; !ok {
			ev[name] = time.Duration((t - t0) * float64(time.Second))
		}
	}
	who := map[string]string{agentboxPid: "agentbox"} // pid → what it is
	selfExecs := 0
	for _, r := range recs {
		if r.kind == "exec" {
			name := ""
			switch base := filepath.Base(r.filename); {
			case r.pid == agentboxPid:
				name = "agentbox"
			case base == runtime && who[r.pid] == "":
				name = "runtime"
			case r.filename == "/.agentbox/init":
				name = "init"
			case r.filename == "/proc/self/exe" && ev["init exec"] > 0:
				selfExecs++
				name = "agent's process"
				if selfExecs > 1 {
					name = "starter" // older builds: the probe process, then the starter
				}
			case base == "true" && (who[r.pid] == "agent's process" || who[r.pid] == "starter"):
				name = "agent"
			}
			if name != "" {
				who[r.pid] = name
				set(name+" exec", r.t)
			}
			continue
		}
		if name := who[r.pid]; name != "" && r.groupDead {
			set(name+" exit", r.t)
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, tracePrefix)
		if !ok {
			continue
		}
		i := strings.LastIndex(rest, " @")
		if i < 0 {
			continue
		}
		t, err := strconv.ParseFloat(rest[i+2:], 64)
		j := strings.LastIndexByte(rest[:i], ' ')
		if err != nil || j < 0 {
			continue
		}
		if name := strings.TrimSpace(rest[:j]); name != "" {
			set(name+" ends", t)
		}
	}
	return ev, nil
}

// timelineReport is the median of each event over the launches, in time
// order, with the gap to the one before and how many launches had it.
func timelineReport(launches []map[string]time.Duration) string {
	byName := map[string][]time.Duration{}
	for _, ev := range launches {
		for name, d := range ev {
			byName[name] = append(byName[name], d)
		}
	}
	type row struct {
		name string
		at   time.Duration
		n    int
	}
	var rows []row
	for name, ds := range byName {
		rows = append(rows, row{name, sample(ds).median(), len(ds)})
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.at, b.at), strings.Compare(a.name, b.name))
	})
	var b strings.Builder
	fmt.Fprintf(&b, "  %-34s %9s %9s %s\n", "event", "at", "gap", "launches")
	var prev time.Duration
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-34s %9s %9s %d\n", r.name, ms(r.at), "+"+ms(r.at-prev), r.n)
		prev = r.at
	}
	return b.String()
}
