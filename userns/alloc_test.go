package userns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var fixedNow = time.Date(2025, 11, 29, 7, 0, 0, 0, time.UTC)

func newAlloc(t *testing.T, h HostIDs) *Allocator {
	t.Helper()
	return &Allocator{Dir: filepath.Join(t.TempDir(), "userns"), Host: h, now: func() time.Time { return fixedNow }}
}

func TestAllocateReleaseLeases(t *testing.T) {
	a := newAlloc(t, HostIDs{Passwd: debianPasswd})
	for _, id := range []string{"run-a", "run-b", "run-c"} {
		if _, err := a.Allocate(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Release("run-b"); err != nil {
		t.Fatal(err)
	}
	l, err := a.Allocate("run-d") // takes run-b's freed slot, the lowest
	if err != nil {
		t.Fatal(err)
	}
	if l.Slot != bslot(165536) {
		t.Errorf("run-d got %v, want the freed slot %v", l.Slot, bslot(165536))
	}
	got, err := a.Leases()
	if err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	want := []Lease{
		{RunID: "run-a", Slot: bslot(100000), PID: pid, Created: fixedNow},
		{RunID: "run-d", Slot: bslot(165536), PID: pid, Created: fixedNow},
		{RunID: "run-c", Slot: bslot(231072), PID: pid, Created: fixedNow},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Leases (-want +got):\n%s", diff)
	}
	if err := a.Release("never-allocated"); err != nil {
		t.Errorf("Release of an unknown run = %v, want nil", err)
	}
	fi, err := os.Stat(a.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode = %v (%v), want 0700", fi.Mode().Perm(), err)
	}
}

func TestAllocateErrors(t *testing.T) {
	t.Run("bad run id", func(t *testing.T) {
		a := newAlloc(t, HostIDs{})
		for _, id := range []string{"", "../x", "a/b", ".hidden", strings.Repeat("x", 129)} {
			if _, err := a.Allocate(id); err == nil {
				t.Errorf("Allocate(%q) succeeded", id)
			}
		}
	})
	t.Run("duplicate run", func(t *testing.T) {
		a := newAlloc(t, HostIDs{})
		if _, err := a.Allocate("r"); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Allocate("r"); !errors.Is(err, ErrAlreadyLeased) {
			t.Errorf("err = %v, want ErrAlreadyLeased", err)
		}
	})
	t.Run("exhausted", func(t *testing.T) {
		h := HostIDs{
			SubUIDs: []SubIDEntry{{"agentbox", 1000000, 2 * SlotSize}},
			SubGIDs: []SubIDEntry{{"agentbox", 1000000, 2 * SlotSize}},
		}
		a := newAlloc(t, h)
		for _, id := range []string{"a", "b"} {
			if _, err := a.Allocate(id); err != nil {
				t.Fatal(err)
			}
		}
		_, err := a.Allocate("c")
		if !errors.Is(err, ErrExhausted) {
			t.Errorf("err = %v, want ErrExhausted", err)
		}
		// The user is told the command that frees slots, not a Go API.
		for _, want := range []string{"agentbox gc", "2 leases", "/etc/subuid"} {
			if err != nil && !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say %q", err, want)
			}
		}
		if err != nil && strings.Contains(err.Error(), "Leases") {
			t.Errorf("err = %v names a Go API", err)
		}
	})
	t.Run("bad host files", func(t *testing.T) {
		a := newAlloc(t, HostIDs{SubUIDs: []SubIDEntry{{"agentbox", 1000000, SlotSize}}})
		if _, err := a.Allocate("a"); !errors.Is(err, ErrIncompleteDedicated) {
			t.Errorf("err = %v, want ErrIncompleteDedicated", err)
		}
	})
	t.Run("corrupt lease blocks allocation", func(t *testing.T) {
		a := newAlloc(t, HostIDs{})
		if _, err := a.Allocate("a"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a.Dir, "b.lease"), []byte("{tor"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := a.Allocate("c")
		if err == nil || !strings.Contains(err.Error(), "b.lease is unreadable") {
			t.Errorf("err = %v, want an unreadable-lease error", err)
		}
	})
}

// TestLeaseSurvivesHostChange: a slot leased before /etc/subuid changed is
// still avoided after, even though the new candidates are not aligned with it.
func TestLeaseSurvivesHostChange(t *testing.T) {
	a := newAlloc(t, HostIDs{})
	if _, err := a.Allocate("old"); err != nil { // 100000..165535
		t.Fatal(err)
	}
	a.Host = HostIDs{SubUIDs: []SubIDEntry{{"ana", 90000, 20000}}} // candidates now start at 110000
	l, err := a.Allocate("new")
	if err != nil {
		t.Fatal(err)
	}
	if l.Slot.overlaps(bslot(100000)) {
		t.Errorf("new slot %v overlaps the old lease", l.Slot)
	}
}

// Peek is the slot Allocate leases next, and leases nothing: also when the
// candidates changed since, where a slot that overlaps an old lease
// without starting at its uid is taken (agentbox spec used to show one by
// exact uid, which a run would never get).
func TestPeekIsTheSlotAllocateLeases(t *testing.T) {
	a := newAlloc(t, HostIDs{})
	if _, err := a.Allocate("old"); err != nil { // 100000..165535
		t.Fatal(err)
	}
	a.Host = HostIDs{SubUIDs: []SubIDEntry{{"ana", 90000, 20000}}} // candidates now start at 110000
	peeked, err := a.Peek()
	if err != nil {
		t.Fatal(err)
	}
	if peeked.overlaps(bslot(100000)) {
		t.Errorf("peeked slot %v overlaps the old lease", peeked)
	}
	if leases, _ := a.Leases(); len(leases) != 1 {
		t.Errorf("Peek leased: %v", leases)
	}
	l, err := a.Allocate("new")
	if err != nil || l.Slot != peeked {
		t.Errorf("Allocate leased %v (%v), Peek said %v", l.Slot, err, peeked)
	}
}

// Peek without a state directory creates none, and says the slot the
// first Allocate leases.
func TestPeekCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "leases")
	a := &Allocator{Dir: dir}
	peeked, err := a.Peek()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Peek made its state directory: %v", err)
	}
	if l, err := a.Allocate("first"); err != nil || l.Slot != peeked {
		t.Errorf("Allocate leased %v (%v), Peek said %v", l.Slot, err, peeked)
	}
}

const (
	helperEnv   = "AGENTBOX_USERNS_ALLOC_HELPER"
	helperProcs = 4
	helperEach  = 8
	goroutines  = 16
)

// TestAllocateConcurrent allocates from many goroutines of this process and
// from several helper processes at once, then checks that every run got a
// lease and no two leases share an id.
func TestAllocateConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "userns")
	procs := make([]*exec.Cmd, helperProcs)
	for i := range procs {
		procs[i] = exec.Command(os.Args[0])
		procs[i].Env = append(os.Environ(), helperEnv+"="+dir, "AGENTBOX_HELPER_PREFIX=p"+strconv.Itoa(i))
		procs[i].Stderr = os.Stderr
		if err := procs[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	allocateMany(t, dir, "g", goroutines)
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	leases, err := (&Allocator{Dir: dir}).Leases()
	if err != nil {
		t.Fatal(err)
	}
	if want := goroutines + helperProcs*helperEach; len(leases) != want {
		t.Fatalf("got %d leases, want %d", len(leases), want)
	}
	for i, a := range leases {
		for _, b := range leases[i+1:] {
			if a.Slot.overlaps(b.Slot) {
				t.Errorf("leases %s %v and %s %v overlap", a.RunID, a.Slot, b.RunID, b.Slot)
			}
		}
	}
}

// TestMain runs the test binary as a helper process of
// TestAllocateConcurrent when helperEnv names a lease directory, and as
// the tests otherwise.
func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		for _, err := range allocate(dir, os.Getenv("AGENTBOX_HELPER_PREFIX"), helperEach) {
			fmt.Fprintln(os.Stderr, "alloc helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func allocateMany(t *testing.T, dir, prefix string, n int) {
	t.Helper()
	for _, err := range allocate(dir, prefix, n) {
		t.Error(err)
	}
}

// allocate takes n leases concurrently and returns the errors.
func allocate(dir, prefix string, n int) []error {
	a := &Allocator{Dir: dir, Host: HostIDs{Passwd: debianPasswd}}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := a.Allocate(fmt.Sprintf("%s-%d", prefix, i)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

// A lease that a crash of the system left torn stops allocation, naming
// its file, and LeaseIDs still lists it by its name, so that gc can free
// it once its run is gone (leases are not synced: see Allocator).
func TestTornLeaseIsListedByName(t *testing.T) {
	a := newAlloc(t, HostIDs{Passwd: debianPasswd})
	if _, err := a.Allocate("run-a"); err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(a.Dir, "run-torn.lease")
	if err := os.WriteFile(torn, nil, 0o600); err != nil { // data never reached the disk
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.Dir, ".lease-123"), []byte("{"), 0o600); err != nil { // a temporary file
		t.Fatal(err)
	}
	if _, err := a.Allocate("run-b"); err == nil || !strings.Contains(err.Error(), torn) {
		t.Errorf("Allocate beside a torn lease = %v, want an error naming %s", err, torn)
	}
	ids, err := a.LeaseIDs()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"run-a", "run-torn"}, ids); diff != "" {
		t.Errorf("LeaseIDs (-want +got):\n%s", diff)
	}
	if err := a.Release("run-torn"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Allocate("run-b"); err != nil {
		t.Errorf("Allocate once the torn lease is released: %v", err)
	}
}
