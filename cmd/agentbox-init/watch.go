//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/selftest"
)

// The sandbox dies with its launcher. The launcher holds its end of the
// init channel for exactly as long as the run lives (it closes it in
// teardown, and no other process has a copy), so the channel closing, by
// EOF or any error, means there is no launcher to answer to: no teardown
// will come, and the agent would otherwise run on, its workspace grant
// live. Init then ends the sandbox at once. As PID 1 of the sandbox's PID
// namespace it only has to exit: the kernel kills every other process of
// the namespace with it. Outside a PID namespace (tests) it kills the
// process groups of the children it started first.

// launcherWatch is the only reader of the init channel once the
// configuration is in: it hands each message to whoever waits for one (the
// go) and drops it when nobody does, so that it always reads on and sees
// the channel close.
type launcherWatch struct{ msgs chan selftest.Message }

// watchLauncher starts reading conn for the rest of init's life.
func watchLauncher(conn *selftest.Conn) *launcherWatch {
	w := &launcherWatch{msgs: make(chan selftest.Message, 1)}
	go func() {
		for {
			m, err := conn.Recv(context.Background())
			if err != nil {
				endSandbox(err)
				return
			}
			select {
			case w.msgs <- m:
			default:
			}
		}
	}()
	return w
}

// next waits for the launcher's next message.
func (w *launcherWatch) next() selftest.Message { return <-w.msgs }

// endSandbox kills everything init started and exits.
func endSandbox(reason error) {
	fmt.Fprintf(os.Stderr, "agentbox-init: the channel to the launcher closed (%v): ending the sandbox\n", reason)
	if os.Getpid() != 1 {
		tree.killAll()
	}
	os.Exit(selftest.ExitInitFailed)
}

// processTree is what init kills when it is not PID 1: the process group
// of every child it started (each child leads a group of its own). A group
// is forgotten once its leader has been collected, so that a reused pid is
// never killed.
type processTree struct {
	mu     sync.Mutex
	groups map[int]bool
}

var tree = &processTree{groups: map[int]bool{}}

func (t *processTree) add(pid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.groups[pid] = true
}

func (t *processTree) forget(pid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.groups, pid)
}

func (t *processTree) killAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for pgid := range t.groups {
		_ = unix.Kill(-pgid, unix.SIGKILL)
	}
}
