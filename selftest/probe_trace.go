package selftest

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// tracePID returns the ptrace probes' target, or an outcome when it cannot be
// probed from this process (a process cannot trace itself).
func tracePID(e *Env) (int, *outcome) {
	pid := e.Config.ptracePID()
	if pid == os.Getpid() {
		return pid, &outcome{
			target: "pid " + strconv.Itoa(pid), decision: Unknown, observed: "probe-is-target",
			detail: "the probe runs as its own target; run it from a child (agentbox-init does)",
		}
	}
	return pid, nil
}

// probePtrace seizes the target, which does not stop it, then interrupts,
// waits for the stop and detaches, all on one locked thread (the tracer).
func probePtrace(e *Env) outcome {
	pid, skip := tracePID(e)
	if skip != nil {
		return *skip
	}
	err := seizeAndDetach(pid)
	return pidOutcome(pid, err, "attached", "PTRACE_SEIZE of pid "+strconv.Itoa(pid))
}

// pidOutcome decides a probe aimed at pid from the call's error: ESRCH is
// UNKNOWN (the target is gone, nothing was decided), an allowed call is
// observed as allowed, and what names the call in the detail.
func pidOutcome(pid int, err error, allowed, what string) outcome {
	d, o := decideSyscall(err)
	if errors.Is(err, unix.ESRCH) {
		d, o = Unknown, "no-such-process"
	}
	if d == Allow {
		o = allowed
	}
	return outcome{target: "pid " + strconv.Itoa(pid), decision: d, observed: o, detail: what + ": " + errnoName(err)}
}

// probeKill sends signal 0, which runs the permission check and delivers
// nothing: the caller's real or effective uid must equal the target's real
// or saved uid, or it needs CAP_KILL over the target's user namespace (and,
// with Landlock signal scoping, the target must be in the caller's domain).
func probeKill(e *Env) outcome {
	pid, skip := tracePID(e)
	if skip != nil {
		return *skip
	}
	err := unix.Kill(pid, 0)
	return pidOutcome(pid, err, "signal-allowed", "kill of pid "+strconv.Itoa(pid)+" with signal 0")
}
