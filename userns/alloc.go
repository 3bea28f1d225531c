package userns

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentbox/agentbox/ledger"
)

// Errors of the allocator, for errors.Is.
var (
	// ErrExhausted means every candidate slot is leased.
	ErrExhausted = errors.New("no free id slot")
	// ErrAlreadyLeased means the run id already holds a slot.
	ErrAlreadyLeased = errors.New("run already holds an id slot")
)

// Lease is one taken slot, stored as the file Dir/RUNID.lease.
type Lease struct {
	RunID   string    `json:"run_id"`
	Slot    Slot      `json:"slot"`
	PID     int       `json:"pid"` // the process that allocated it; informational
	Created time.Time `json:"created"`
}

// Allocator hands out Slots from Host to runs without overlap between
// concurrent runs, in this process or any other using the same Dir.
//
// Dir holds the lock file "lock" and one "RUNID.lease" file per taken slot;
// it is created with mode 0700 if missing. Every operation holds an flock on
// the lock file. A lease stays taken until Release, even if its process has
// died: only the caller knows whether the run's container is gone, so a crashed
// run's slot is freed by the caller's garbage collection (see LeaseIDs).
//
// Leases are written whole (a temporary file renamed into place) but not
// synced to disk: they describe sandboxes of this boot, which a crash of
// the system ends with them, and Dir is meant to be volatile (the run root,
// a tmpfs on most hosts). A crash of the launcher leaves a whole lease; a
// crash of the system may leave a torn one on a disk-backed Dir, which
// stops allocation with its name until gc or the user removes it (read).
// The fsyncs cost about 1.7 ms of every launch on a disk-backed run root,
// and the I/O they start competes with the launch for the CPU
// (docs/bench.md, "The id lease's fsyncs").
type Allocator struct {
	Dir  string
	Host HostIDs
	now  func() time.Time
}

// Allocate leases the lowest free slot to runID and returns the lease. Two
// leases never share a uid or a gid, even when the host's id files changed
// between allocations.
func (a *Allocator) Allocate(runID string) (Lease, error) {
	if !ledger.IsRunID(runID) {
		return Lease{}, fmt.Errorf("allocate id slot: run id %q must match %s", runID, ledger.RunIDPattern)
	}
	cands, err := a.Host.Slots()
	if err != nil {
		return Lease{}, fmt.Errorf("allocate id slot: %w", err)
	}
	var lease Lease
	err = a.locked(syscall.LOCK_EX, func() error {
		taken, err := a.read()
		if err != nil {
			return err
		}
		if slices.ContainsFunc(taken, func(l Lease) bool { return l.RunID == runID }) {
			return fmt.Errorf("%w: %s", ErrAlreadyLeased, runID)
		}
		s, ok := firstFree(cands, taken)
		if !ok {
			return exhausted(len(taken), a.Host.Source())
		}
		lease = Lease{RunID: runID, Slot: s, PID: os.Getpid(), Created: a.clock().UTC()}
		return a.write(lease)
	})
	if err != nil {
		return Lease{}, fmt.Errorf("allocate id slot: %w", err)
	}
	return lease, nil
}

// Peek returns the slot Allocate would lease now, and leases nothing
// (agentbox spec shows the ids a run would get). It creates nothing
// either: without a state directory there is no lease yet.
func (a *Allocator) Peek() (Slot, error) {
	cands, err := a.Host.Slots()
	if err != nil {
		return Slot{}, fmt.Errorf("peek id slot: %w", err)
	}
	if _, err := os.Stat(a.Dir); errors.Is(err, fs.ErrNotExist) {
		if s, ok := firstFree(cands, nil); ok {
			return s, nil
		}
		return Slot{}, fmt.Errorf("peek id slot: %w", exhausted(0, a.Host.Source()))
	}
	var slot Slot
	err = a.locked(syscall.LOCK_SH, func() error {
		taken, err := a.read()
		if err != nil {
			return err
		}
		s, ok := firstFree(cands, taken)
		if !ok {
			return exhausted(len(taken), a.Host.Source())
		}
		slot = s
		return nil
	})
	if err != nil {
		return Slot{}, fmt.Errorf("peek id slot: %w", err)
	}
	return slot, nil
}

// firstFree is the lowest candidate slot that overlaps no taken one.
func firstFree(cands iter.Seq[Slot], taken []Lease) (Slot, bool) {
	for s := range cands {
		if !slices.ContainsFunc(taken, func(l Lease) bool { return l.Slot.overlaps(s) }) {
			return s, true
		}
	}
	return Slot{}, false
}

// exhausted says that every slot is leased, by how many runs, and what to
// do: `agentbox gc` frees the slots of runs whose launcher died, and a
// larger dedicated range allows more runs at once.
func exhausted(leased int, src Source) error {
	more := "give agentbox a dedicated range for more runs at once (usermod --add-subuids 2000000-2655359 --add-subgids 2000000-2655359 agentbox; see docs/userns.md)"
	if src == SourceDedicated {
		more = "add ids to agentbox's entries in /etc/subuid and /etc/subgid for more runs at once (65536 per run)"
	}
	return fmt.Errorf("%w: every slot of %d ids in the %s range is leased (%d leases), to runs still going or to runs whose launcher died; run 'agentbox gc' to free the slots of runs that are gone, or %s",
		ErrExhausted, SlotSize, src, leased, more)
}

// Release frees the slot leased to runID. Releasing a run that holds no
// lease is not an error, so that a cleanup interrupted half-way can be
// repeated.
func (a *Allocator) Release(runID string) error {
	if !ledger.IsRunID(runID) {
		return fmt.Errorf("release id slot: run id %q must match %s", runID, ledger.RunIDPattern)
	}
	err := a.locked(syscall.LOCK_EX, func() error {
		err := os.Remove(a.leasePath(runID))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release id slot of %s: %w", runID, err)
	}
	return nil
}

// LeaseIDs returns the run ids that hold a lease file, read from the
// files' names alone: a torn lease (see Allocator) is listed too, so that
// gc can free it once its run is gone.
func (a *Allocator) LeaseIDs() ([]string, error) {
	var ids []string
	err := a.locked(syscall.LOCK_SH, func() error {
		ents, err := os.ReadDir(a.Dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			id, ok := strings.CutSuffix(e.Name(), ".lease")
			if ok && ledger.IsRunID(id) {
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list id slot leases: %w", err)
	}
	return ids, nil
}

// Leases returns every taken slot, ordered by host uid.
func (a *Allocator) Leases() ([]Lease, error) {
	var out []Lease
	err := a.locked(syscall.LOCK_SH, func() error {
		var err error
		out, err = a.read()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list id slot leases: %w", err)
	}
	return out, nil
}

func (a *Allocator) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

func (a *Allocator) leasePath(runID string) string {
	return filepath.Join(a.Dir, runID+".lease")
}

// locked runs fn while holding an flock of kind how on Dir/lock.
func (a *Allocator) locked(how int, fn func() error) error {
	if a.Dir == "" {
		return errors.New("allocator has no state directory")
	}
	if err := os.MkdirAll(a.Dir, 0o700); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(a.Dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open lock file: %w", err)
	}
	defer f.Close() // closing the file drops the lock
	if err := flock(f, how); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return fn()
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// read loads every lease file. One that cannot be parsed stops allocation:
// its slot is unknown, so any slot might overlap it.
func (a *Allocator) read() ([]Lease, error) {
	ents, err := os.ReadDir(a.Dir)
	if err != nil {
		return nil, err
	}
	var out []Lease
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".lease") || strings.HasPrefix(name, ".") {
			continue
		}
		l, err := readLease(filepath.Join(a.Dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(x, y Lease) int { return cmp.Compare(x.Slot.UID, y.Slot.UID) })
	return out, nil
}

func readLease(path string) (Lease, error) {
	var l Lease
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &l)
	}
	if err == nil && (l.Slot.Size == 0 || filepath.Base(path) != l.RunID+".lease") {
		err = errors.New("lease does not match its file name or has no slot")
	}
	if err != nil {
		return Lease{}, fmt.Errorf("lease %s is unreadable (%w); if no container of that run is left, remove the file", path, err)
	}
	return l, nil
}

// write stores l whole: a temporary file renamed into place (not synced:
// see Allocator).
func (a *Allocator) write(l Lease) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(a.Dir, ".lease-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), a.leasePath(l.RunID))
}
