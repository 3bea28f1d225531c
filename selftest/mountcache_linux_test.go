package selftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// writeMountinfo writes a self/mountinfo of n mounts under proc.
func writeMountinfo(t *testing.T, proc string, n int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d 1 0:%d / /m%d rw,nosuid - tmpfs tmpfs rw\n", 100+i, 40+i, i)
	}
	if err := os.WriteFile(filepath.Join(proc, "self", "mountinfo"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunSharesTheMountTable: the probes of one run that read the mount
// table each see the table a read of their own would have shown (the one
// the last probe that changes it left), and those between two such
// probes share one read of it.
func TestRunSharesTheMountTable(t *testing.T) {
	proc := t.TempDir()
	if err := os.Mkdir(filepath.Join(proc, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeMountinfo(t, proc, 1)
	var mu sync.Mutex
	current := 1 // mounts in the file; changed only by the changers, under their lock
	reader := func(name string) Probe {
		return Probe{Name: name, Expect: Deny, shares: reading(mountTable), run: func(e *Env) outcome {
			ms, err := e.readMounts()
			mu.Lock()
			want := current
			mu.Unlock()
			if err != nil || len(ms) != want {
				return outcome{decision: Allow, observed: fmt.Sprintf("read %d mounts (%v), the table has %d", len(ms), err, want)}
			}
			return outcome{decision: Deny, observed: "current"}
		}}
	}
	changer := func(name string) Probe {
		return Probe{Name: name, Expect: Deny, shares: changing(mountTable), run: func(*Env) outcome {
			mu.Lock()
			current++
			n := current
			mu.Unlock()
			writeMountinfo(t, proc, n)
			return outcome{decision: Deny, observed: "changed"}
		}}
	}
	var probes []Probe
	for i := range 30 {
		if i%6 == 5 {
			probes = append(probes, changer(fmt.Sprint("c", i)))
		} else {
			probes = append(probes, reader(fmt.Sprint("r", i)))
		}
	}
	for _, limit := range []int{1, Parallelism} {
		current = 1
		writeMountinfo(t, proc, 1)
		e := &Env{Config: &InitConfig{RunID: "R"}, Proc: proc}
		if err := runProbes(context.Background(), e, probes, limit, func(r Result) error {
			if !r.Passed() {
				t.Errorf("limit %d: %s %s", limit, r.Probe, r.Observed)
			}
			return nil
		}, nil); err != nil {
			t.Fatal(err)
		}
		if e.mounts != nil {
			t.Errorf("limit %d: the run left its mount table in the caller's Env", limit)
		}
	}

	// Between changers the readers share one read: a table changed behind
	// the run's back (which no probe does) is not seen until a changer ran.
	writeMountinfo(t, proc, 1)
	e := &Env{Config: &InitConfig{RunID: "R"}, Proc: proc}
	var seen []int
	read := func(name string) Probe {
		return Probe{Name: name, Expect: Deny, shares: reading(mountTable), run: func(e *Env) outcome {
			ms, _ := e.readMounts()
			seen = append(seen, len(ms))
			if len(seen) == 1 {
				writeMountinfo(t, proc, 3)
			}
			return outcome{decision: Deny}
		}}
	}
	noop := Probe{Name: "c", Expect: Deny, shares: changing(mountTable), run: func(*Env) outcome { return outcome{decision: Deny} }}
	if err := runProbes(context.Background(), e, []Probe{read("a"), read("b"), noop, read("d")}, 1, func(Result) error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[1 1 3]" {
		t.Errorf("mounts seen %v, want [1 1 3]: one read shared until the changer ran, then a new one", seen)
	}
}
