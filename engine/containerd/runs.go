package containerd

import (
	"sync"

	containerd "github.com/containerd/containerd/v2/client"
)

// run is what Create made for one sandbox and the later calls need.
type run struct {
	task   containerd.Task
	exit   <-chan containerd.ExitStatus
	io     *stdio
	client *containerd.Client
	// exited is set once Wait has had the task's exit status: the task's
	// first process has exited, and with it (the sandbox has a pid
	// namespace of its own) every process of the sandbox. Guarded by
	// runs.
	exited bool
}

// runs are the tasks this process created, by daemon and id. The
// launcher runs a sandbox with one engine and tears it down with another,
// opened from the bundle's record (Recorded); that one finds here what
// the first one knows: the task, whether its exit was seen, and the
// connection to the daemon.
var runs = struct {
	sync.Mutex
	m map[runKey]*run
}{m: map[runKey]*run{}}

type runKey struct{ address, id string }

func addRun(address, id string, r *run) {
	runs.Lock()
	defer runs.Unlock()
	runs.m[runKey{address, id}] = r
}

// findRun is the run of id created on the daemon at address by this
// process, nil if none; take also forgets it.
func findRun(address, id string, take bool) *run {
	runs.Lock()
	defer runs.Unlock()
	k := runKey{address, id}
	r := runs.m[k]
	if take {
		delete(runs.m, k)
	}
	return r
}

// setExited records that the task's exit was seen.
func (r *run) setExited() {
	runs.Lock()
	defer runs.Unlock()
	r.exited = true
}

func (r *run) hasExited() bool {
	runs.Lock()
	defer runs.Unlock()
	return r.exited
}
