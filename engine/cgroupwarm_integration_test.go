//go:build integration && linux

package engine

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/testutil"
)

// The warm-up writes the launcher's pid into the cgroup it is in, again
// and again until stopped, and that moves nothing: the process's cgroups
// on every hierarchy are the same afterwards.
func TestWarmCgroupMigrationMovesNothingAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	f := ownCgroupProcs()
	if f == nil {
		t.Fatalf("no cgroup.procs of this process's cgroups opens for writing as root (candidates %q)", ownCgroupFiles("/proc/self/cgroup"))
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid())); err != nil {
		t.Errorf("the kernel refused the warm-up's write to %s: %v", f.Name(), err)
	}
	f.Close()
	before, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	stop := WarmCgroupMigration()
	time.Sleep(10 * warmEvery) // the first write and a few more
	stop()
	stop() // a second stop is harmless
	after, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("the warm-up moved the process:\nbefore %s\nafter  %s", before, after)
	}
}
