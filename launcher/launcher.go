package launcher

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// launch drives one sandbox through the pipeline of DESIGN.md §3. It holds
// only what every stage reads and none writes: the Config, where the
// launcher's notes go, and the evidence channel. Each stage hands a value
// of its own to the next: planned (the pure prefix: policy, host facts,
// the run's chosen values, the Plan), prepared (everything set up from the
// plan, up to a created sandbox), verified (the probes and the host's
// checks, judged), handedOver (the agent's Landlock status), tornDown (the
// teardown record, the gateway's counts, the workspace compared) and the
// ledger record.
type launch struct {
	cfg Config
	// out is where the launcher's own notes go (Config.Stderr).
	out io.Writer
	// ev is the --evidence channel, nil without one.
	ev *ledger.Evidence
}

// lockedWriter is the launcher's notes' writer, one Write at a time: the
// steps of a group (sideBySide) write their notes and traces at once.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}

// newLaunch checks cfg and opens its evidence channel before anything
// runs. For a run, JSON without Evidence is a usage error: the evidence
// used to go to stderr, where the agent can print a forged record before
// the real one.
func newLaunch(cfg Config) (*launch, error) {
	l := &launch{cfg: cfg, out: &lockedWriter{w: cfg.stderr()}}
	if cfg.JSON && cfg.Evidence == "" && !cfg.ProbesOnly {
		return nil, WithKind(KindUsage, fmt.Errorf("--json needs --evidence FD|FILE: the agent writes to stdout and stderr too, so evidence there could be forged; for example: agentbox run --json --evidence 3 -- CMD 3>evidence.jsonl"))
	}
	if cfg.Evidence == "" {
		return l, nil
	}
	ch, err := ledger.OpenEvidence(cfg.Evidence)
	if err != nil {
		return nil, WithKind(KindUsage, err)
	}
	l.ev = ch
	return l, nil
}

// namedStep is one step of a recipe: its name (for errors and traces) and
// what it does; or a group of steps (sideBySide), whose lanes it holds.
type namedStep struct {
	name  string
	run   func() error
	lanes [][]namedStep
}

// sideBySide is a group of the recipe named name: each lane's steps run in
// order, as runSteps runs a recipe's, and the lanes at the same time, on
// the launcher's two cores. Steps go in different lanes only when neither
// reads what the other makes (prepared's fields, files and sockets) and
// each would fail or succeed as it would in the recipe's order; the step
// after the group starts once every lane has finished (runGroup).
func sideBySide(name string, lanes ...[]namedStep) namedStep {
	return namedStep{name: name, lanes: lanes}
}

// flat is the group's steps in the recipe's order: the first lane's, then
// the next lane's.
func (g namedStep) flat() []namedStep {
	var out []namedStep
	for _, lane := range g.lanes {
		out = append(out, lane...)
	}
	return out
}

// step runs fn and classifies its error (KindOf): bad input is exit 2, a
// refused boundary 3, anything the host could not do 4.
func (l *launch) step(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	l.trace(name, start)
	if l.cfg.AfterStep != nil {
		l.cfg.AfterStep(name)
	}
	if err == nil {
		return nil
	}
	return StepError(name, err)
}

// runSteps runs steps in order and stops at the first failure, or before
// the next step once ctx has ended (a signal during setup).
func (l *launch) runSteps(ctx context.Context, steps []namedStep) error {
	for _, s := range steps {
		if s.lanes != nil {
			if err := l.runGroup(ctx, s); err != nil {
				return err
			}
			continue
		}
		if ctx.Err() != nil {
			return l.step(s.name, interrupted)
		}
		if err := l.step(s.name, s.run); err != nil {
			return err
		}
	}
	return nil
}

// interrupted is the refusal of a step that ctx's end (a signal during
// setup) kept from running.
func interrupted() error { return &refusal{"interrupted before the sandbox started"} }

// runGroup runs a group's lanes side by side (the last on this
// goroutine), each lane's steps in order, each traced by name as it ends;
// a lane stops at its first failure, or before its next step once ctx has
// ended. A failure does not stop the other lanes: each lane runs up to its
// own first failure, so the group's error is the one the recipe's order
// would meet first, the same error as when its steps ran one by one. It
// returns only once every lane has finished, since the steps write
// prepared's fields that teardown reads; then AfterStep sees the steps
// that ran, in the recipe's order.
func (l *launch) runGroup(ctx context.Context, g namedStep) error {
	type outcome struct {
		ran bool
		err error
	}
	done := make([][]outcome, len(g.lanes))
	var wg sync.WaitGroup
	for i, lane := range g.lanes {
		done[i] = make([]outcome, len(lane))
		run := func() {
			for j, s := range lane {
				fn := s.run
				if ctx.Err() != nil {
					fn = interrupted
				}
				start := time.Now()
				err := fn()
				l.trace(s.name, start)
				done[i][j] = outcome{ran: true, err: err}
				if err != nil {
					return
				}
			}
		}
		if i == len(g.lanes)-1 {
			run()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	wg.Wait()
	var first error
	for i, lane := range g.lanes {
		for j, s := range lane {
			o := done[i][j]
			if !o.ran {
				break
			}
			if l.cfg.AfterStep != nil {
				l.cfg.AfterStep(s.name)
			}
			if o.err != nil && first == nil {
				first = StepError(s.name, o.err)
			}
		}
	}
	return first
}

// LoadPolicy reads the policy files src names (the user's own, then
// --policy or the workspace's trusted agentbox.yaml), validates the
// policy the flags describe and merges it over them. Errors are
// *policy.InputError with the file and line, or *policy.UntrustedError for
// a workspace file not trusted as it is.
func LoadPolicy(flags policy.Policy, src policy.Sources) (policy.Policy, []policy.Loaded, error) {
	file, loaded, err := policy.Load(src)
	if err != nil {
		return policy.Policy{}, nil, err
	}
	if err := policy.Validate(flags, policy.Source{}); err != nil {
		return policy.Policy{}, nil, err
	}
	return file.Merge(flags), loaded, nil
}

// argv is the command the plan is made for: a probes-only run starts no
// agent, and plans for `true`.
func (l *launch) argv() []string {
	if l.cfg.ProbesOnly {
		return []string{"true"}
	}
	return l.cfg.Argv
}

// subTrace is a trace of the parts of step parent, named "parent/part",
// which abbench reports apart from the steps (they add up to part of
// their step); nil when AGENTBOX_TRACE is not 1.
func (l *launch) subTrace(parent string) func(part string, took time.Duration) {
	if l.cfg.getenv("AGENTBOX_TRACE") != "1" {
		return nil
	}
	return func(part string, took time.Duration) { l.traceFor(parent+"/"+part, took) }
}

// parts is a trace of the parts of step parent as subTrace's, each part
// timed from the previous call (or from parts itself); it does nothing
// when AGENTBOX_TRACE is not 1.
func (l *launch) parts(parent string) func(part string) {
	sub := l.subTrace(parent)
	if sub == nil {
		return func(string) {}
	}
	last := time.Now()
	return func(part string) {
		now := time.Now()
		sub(part, now.Sub(last))
		last = now
	}
}

// trace prints a step's wall time on Stderr when AGENTBOX_TRACE=1, which
// is how the README's account of agentbox's own time was measured.
func (l *launch) trace(name string, start time.Time) { l.traceFor(name, time.Since(start)) }

// traceFor prints d as the wall time of step name, as trace does. With
// AGENTBOX_TRACE_CLOCK=1 as well, each line ends in the CLOCK_MONOTONIC
// time it was printed at ("@SECONDS.MICROSECONDS"), the clock of `perf
// record -k CLOCK_MONOTONIC`, so that the steps line up with the
// processes' exec and exit events (abbench timeline; docs/bench.md, "A
// launch's timeline").
func (l *launch) traceFor(name string, d time.Duration) {
	if l.cfg.getenv("AGENTBOX_TRACE") != "1" {
		return
	}
	stamp := ""
	if l.cfg.getenv("AGENTBOX_TRACE_CLOCK") == "1" {
		var ts unix.Timespec
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) == nil {
			stamp = fmt.Sprintf(" @%d.%06d", ts.Sec, ts.Nsec/1000)
		}
	}
	fmt.Fprintf(l.out, "agentbox: trace: %-16s %8.2fms%s\n", name, float64(d.Microseconds())/1000, stamp)
}
