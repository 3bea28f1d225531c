package selftest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeProbe is a probe of the test's own whose run is fn.
func fakeProbe(name string, shares func(*Env) (resource, resource), fn func() outcome) Probe {
	return Probe{Name: name, Expect: Deny, shares: shares, run: func(*Env) outcome { return fn() }}
}

func testEnv() *Env { return &Env{Config: &InitConfig{RunID: "R"}} }

// TestRunEmitsInOrder: results come in the probes' order, whichever
// finishes first, and each once.
func TestRunEmitsInOrder(t *testing.T) {
	var probes []Probe
	for i := range 40 {
		d := time.Duration((40-i)%7) * time.Millisecond
		probes = append(probes, fakeProbe(fmt.Sprint("p", i), nil, func() outcome {
			time.Sleep(d)
			return outcome{decision: Deny, observed: fmt.Sprint(i)}
		}))
	}
	var got []string
	err := runProbes(context.Background(), testEnv(), probes, Parallelism, func(r Result) error {
		got = append(got, r.Probe+"="+r.Observed)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(probes) {
		t.Fatalf("%d results, want %d", len(got), len(probes))
	}
	for i, g := range got {
		if want := fmt.Sprintf("p%d=%d", i, i); g != want {
			t.Errorf("result %d is %s, want %s", i, g, want)
		}
	}
}

// TestRunOverlapsProbes: two independent probes that each wait for the
// other both meet, so they ran at the same time; with a limit of one they
// cannot.
func TestRunOverlapsProbes(t *testing.T) {
	for _, tc := range []struct {
		limit int
		want  string
	}{{Parallelism, "met"}, {1, "alone"}} {
		var wg sync.WaitGroup
		wg.Add(2)
		met := make(chan struct{})
		go func() { wg.Wait(); close(met) }()
		rendezvous := func() outcome {
			wg.Done()
			select {
			case <-met:
				return outcome{decision: Deny, observed: "met"}
			case <-time.After(time.Second):
				return outcome{decision: Deny, observed: "alone"}
			}
		}
		probes := []Probe{fakeProbe("a", nil, rendezvous), fakeProbe("b", nil, rendezvous)}
		var got []string
		if err := runProbes(context.Background(), testEnv(), probes, tc.limit, func(r Result) error {
			got = append(got, r.Observed)
			return nil
		}, nil); err != nil {
			t.Fatal(err)
		}
		// With one at a time the first waits alone; the second then
		// finds the first gone (its Done was counted) and meets nobody
		// either, or meets the closed channel: only the first is sure.
		if got[0] != tc.want {
			t.Errorf("limit %d: the first probe %s, want %s", tc.limit, got[0], tc.want)
		}
	}
}

// TestRunKeepsChangersApart: a probe that changes a resource never runs
// beside one that reads or changes it, and never more than the limit run.
func TestRunKeepsChangersApart(t *testing.T) {
	var readers, writers, running, most atomic.Int32
	var mu sync.Mutex
	var clashes []string
	note := func(s string) { mu.Lock(); clashes = append(clashes, s); mu.Unlock() }
	enter := func() {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
	}
	var probes []Probe
	for i := range 60 {
		name := fmt.Sprint("p", i)
		switch i % 5 {
		case 0: // changes the mount table
			probes = append(probes, fakeProbe(name, changing(mountTable), func() outcome {
				enter()
				defer running.Add(-1)
				if w := writers.Add(1); w != 1 || readers.Load() != 0 {
					note(name + " changed the mount table beside another of its probes")
				}
				time.Sleep(time.Millisecond)
				writers.Add(-1)
				return outcome{decision: Deny, observed: "changed"}
			}))
		case 1, 2: // reads it
			probes = append(probes, fakeProbe(name, reading(mountTable), func() outcome {
				enter()
				defer running.Add(-1)
				readers.Add(1)
				if writers.Load() != 0 {
					note(name + " read the mount table while a probe changed it")
				}
				time.Sleep(time.Millisecond)
				readers.Add(-1)
				return outcome{decision: Deny, observed: "read"}
			}))
		default: // shares nothing
			probes = append(probes, fakeProbe(name, nil, func() outcome {
				enter()
				defer running.Add(-1)
				time.Sleep(time.Millisecond)
				return outcome{decision: Deny, observed: "other"}
			}))
		}
	}
	n := 0
	if err := runProbes(context.Background(), testEnv(), probes, 4, func(Result) error { n++; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if n != len(probes) {
		t.Errorf("%d results, want %d", n, len(probes))
	}
	for _, c := range clashes {
		t.Error(c)
	}
	if m := most.Load(); m > 4 {
		t.Errorf("%d probes ran at once, the limit is 4", m)
	}
}

// TestRunRetiresChangedThreads: a probe that changes its own thread and
// leaves it locked (as setns-denied and ptrace-pid1-denied do where the
// kernel allows their call) changes no thread another probe runs on. The
// change here is the thread's name, which any thread may set.
func TestRunRetiresChangedThreads(t *testing.T) {
	const changed = "agentbox-chg"
	var probes []Probe
	for i := range 200 {
		if i%10 == 0 {
			probes = append(probes, fakeProbe(fmt.Sprint("change", i), nil, func() outcome {
				runtime.LockOSThread() // never unlocked: the thread is changed
				if err := setThreadName(changed); err != nil {
					return outcome{decision: Unknown, observed: err.Error()}
				}
				return outcome{decision: Deny, observed: "changed"}
			}))
			continue
		}
		probes = append(probes, fakeProbe(fmt.Sprint("read", i), nil, func() outcome {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			name, err := threadName()
			switch {
			case errors.Is(err, errNoThreadName):
				return outcome{decision: Unknown, observed: "unsupported"}
			case err != nil:
				return outcome{decision: Unknown, observed: err.Error()}
			case name == changed:
				return outcome{decision: Allow, observed: "changed-thread"}
			}
			return outcome{decision: Deny, observed: "own-thread"}
		}))
	}
	err := runProbes(context.Background(), testEnv(), probes, 2, func(r Result) error {
		switch {
		case r.Observed == "unsupported":
			t.Skip("no thread names on this OS")
		case r.Decision != Deny:
			t.Errorf("%s: %s %s", r.Probe, r.Decision, r.Observed)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// TestRunStopsAtEmitError: an emit error ends Run with that error.
func TestRunStopsAtEmitError(t *testing.T) {
	probes := []Probe{
		fakeProbe("a", nil, func() outcome { return outcome{decision: Deny} }),
		fakeProbe("b", nil, func() outcome { return outcome{decision: Deny} }),
	}
	boom := errors.New("boom")
	n := 0
	err := runProbes(context.Background(), testEnv(), probes, Parallelism, func(Result) error { n++; return boom }, nil)
	if !errors.Is(err, boom) || n != 1 {
		t.Errorf("got %v after %d results, want boom after 1", err, n)
	}
}

// TestRunBatchedFlushesWhenItWaits: idle comes before each wait for a
// result not yet known, with every earlier result emitted, and once after
// the last. Each probe here finishes only once idle has been called for
// it, so Run waits for every one.
func TestRunBatchedFlushesWhenItWaits(t *testing.T) {
	release := make([]chan struct{}, 6)
	var probes []Probe
	for i := range release {
		release[i] = make(chan struct{})
		probes = append(probes, fakeProbe(fmt.Sprint("p", i), nil, func() outcome {
			<-release[i]
			return outcome{decision: Deny}
		}))
	}
	var log []string
	emitted, next := 0, 0
	idle := func() error {
		log = append(log, fmt.Sprint(emitted))
		if next < len(release) {
			close(release[next])
			next++
		}
		return nil
	}
	err := runProbes(context.Background(), testEnv(), probes, Parallelism, func(Result) error {
		emitted++
		return nil
	}, idle)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(log), "[0 1 2 3 4 5 6]"; got != want {
		t.Errorf("flushes after %s results, want %s", got, want)
	}
}
