package engine

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WarmCgroupMigration keeps the kernel's cgroup migration lock warm until
// stop is called, so that the runtime's move of the sandbox's first
// process into the run's cgroups does not wait for an RCU grace period.
//
// Every move of a process between cgroups (a write to cgroup.procs, on
// v1 and v2 alike) takes cgroup_threadgroup_rwsem for writing. That
// percpu rwsem leaves its fast, reader-only mode through rcu_sync_enter,
// which waits for a full grace period when no writer came within the
// last one or two: about 14 ms on an idle 2-core VM at HZ=250, measured
// as crun's first write to cgroup.procs (docs/bench.md, "The cgroup
// migration lock"). A runtime pays it on every start, since starts are
// rarely that close together.
//
// The warm-up moves the launcher into the cgroup it is already in, which
// changes nothing (the kernel migrates no thread whose cgroup is the
// destination) but takes the lock for writing: the first write waits for
// the grace period here, beside the plan and the bundle, and one write
// every warmEvery keeps the lock out of its fast mode until the runtime
// has moved its process. Nothing is made or changed, and nothing waits
// for it: a launcher that may not write its own cgroup.procs (not root,
// no delegation) warms nothing and loses nothing.
func WarmCgroupMigration() (stop func()) {
	f := ownCgroupProcs()
	if f == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer f.Close()
		pid := []byte(strconv.Itoa(os.Getpid()))
		tick := time.NewTicker(warmEvery)
		defer tick.Stop()
		limit := time.After(warmFor)
		for {
			if _, err := f.Write(pid); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-limit:
				return
			case <-tick.C:
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

// warmEvery is how often the warm-up writes again: well inside a grace
// period, after which a lock that no writer took returns to its fast mode.
// warmFor bounds the warm-up of a launch whose stop never comes.
const (
	warmEvery = 4 * time.Millisecond
	warmFor   = 30 * time.Second
)

// ownCgroupProcs opens for writing the cgroup.procs file of the cgroup
// this process is in, on the first hierarchy where it may (the lock is
// one for all of them): the unified one first, then each v1 controller's.
// It returns nil when there is none.
func ownCgroupProcs() *os.File {
	for _, p := range ownCgroupFiles("/proc/self/cgroup") {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			return f
		}
	}
	return nil
}

// ownCgroupFiles lists the cgroup.procs files of the cgroups that the
// /proc/PID/cgroup file at path names, where the hierarchies are mounted
// on a v2, hybrid or v1 host: the unified one's first.
func ownCgroupFiles(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var unified, v1 []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID:CONTROLLERS:PATH; "0::PATH" is the unified hierarchy.
		id, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		ctrls, cg, ok := strings.Cut(rest, ":")
		if !ok || !strings.HasPrefix(cg, "/") {
			continue
		}
		switch {
		case id == "0" && ctrls == "":
			unified = append(unified, filepath.Join(cgroupRoot, cg, "cgroup.procs"), filepath.Join(HybridUnified, cg, "cgroup.procs"))
		case ctrls != "":
			dir := strings.TrimPrefix(ctrls, "name=")
			v1 = append(v1, filepath.Join(cgroupRoot, dir, cg, "cgroup.procs"))
		}
	}
	return append(unified, v1...)
}
