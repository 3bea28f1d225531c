package engine

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A run directory is never under its own name unlocked: launchers that
// make runs while others look for stale ones never lose a run to them
// (another launcher's gc once removed a directory made an instant before
// its lock was taken).
func TestCreateRunDirNeverStale(t *testing.T) {
	root := t.TempDir()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	taken := make(chan string, 1000)
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			stale, err := FindStale(root)
			if err != nil {
				t.Error(err)
				return
			}
			for _, rd := range stale {
				taken <- rd.ID
				rd.Unlock()
			}
		}
	})
	var made []*RunDir
	for i := range 300 {
		rd, err := CreateRunDir(root, "r"+time.Now().Format("150405.000000000")+string(rune('a'+i%26)))
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, rd)
	}
	close(stop)
	wg.Wait()
	close(taken)
	for id := range taken {
		t.Errorf("FindStale took %s while its launcher held it", id)
	}
	for _, rd := range made {
		if _, err := os.Stat(rd.File(lockFile)); err != nil {
			t.Errorf("run %s: %v", rd.ID, err)
		}
		rd.Unlock()
	}
	// Unlocked now, they are stale, and only they: nothing of the names
	// they were made under is left.
	stale, err := FindStale(root)
	if err != nil || len(stale) != len(made) {
		t.Fatalf("%d stale, %v; want the %d runs", len(stale), err, len(made))
	}
	for _, rd := range stale {
		rd.Unlock()
	}
}

// What a launcher that died inside CreateRunDir left is removed once it is
// old and unlocked; one being made, or still locked, stays.
func TestRemoveAbandoned(t *testing.T) {
	root := t.TempDir()
	runs := filepath.Join(root, runsDir)
	old, young, held := filepath.Join(runs, newPrefix+"old"), filepath.Join(runs, newPrefix+"young"), filepath.Join(runs, newPrefix+"held")
	for _, d := range []string{old, young, held} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	lock, err := lockDir(held, true)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	past := time.Now().Add(-2 * abandonedAfter)
	for _, d := range []string{old, held} {
		if err := os.Chtimes(d, past, past); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveAbandoned(root); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]bool{old: false, young: true, held: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
	if stale, _ := FindStale(root); len(stale) != 0 {
		t.Errorf("FindStale took %d of the directories being made", len(stale))
	}
}
