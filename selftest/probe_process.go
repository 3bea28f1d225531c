package selftest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func processProbes() []Probe {
	return []Probe{
		{
			Name: "host-pids-invisible", Group: GroupProcess, Expect: Deny, run: probeHostPIDs, shares: reading(mountTable),
			Summary: "the process has its own PID namespace and no procfs of another one is mounted",
		},
		{
			Name: "prlimit-pid1-denied", Group: GroupProcess, Expect: Deny, run: probePrlimit,
			Summary: "prlimit(2) of PID 1's RLIMIT_NOFILE: read it, then set the same value back",
		},
		{
			Name: "kill-pid1-denied", Group: GroupProcess, Expect: Deny, run: probeKill,
			Summary: "kill(2) of PID 1 with signal 0, which checks permission and delivers nothing",
		},
	}
}

// decidePIDNamespace: kernel threads (children of pid 0 other than init,
// kthreadd and its descendants) are visible only from the host's PID
// namespace; every other namespace sees its own init as the only root. A
// procfs whose "self" is not the caller's pid belongs to another PID
// namespace. (NSpid cannot tell: a procfs lists the namespaces from its own
// downwards, so inside a container it shows one level, as on the host.)
func decidePIDNamespace(kthreads []int, listed bool, self int, procSelf map[string]string) (Decision, string, string) {
	switch {
	case !listed:
		return Unknown, "proc-unreadable", "could not list the processes of /proc"
	case len(kthreads) > 0:
		return Allow, "host-pid-namespace", "kernel threads are visible (pid " + strconv.Itoa(kthreads[0]) + " has parent 0): this is the host's PID namespace"
	}
	for mp, link := range procSelf {
		if link != strconv.Itoa(self) {
			return Allow, "foreign-procfs", "the procfs at " + mp + " is of another PID namespace (self is " + link + ")"
		}
	}
	return Deny, "own-pid-namespace", "no kernel thread is visible and every procfs shows this namespace"
}

// kernelThreads lists the processes under procRoot whose parent is pid 0,
// init excepted.
func kernelThreads(procRoot string) ([]int, bool) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, false
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 {
			continue
		}
		if ppid, ok := statPPID(filepath.Join(procRoot, e.Name(), "stat")); ok && ppid == 0 {
			out = append(out, pid)
		}
	}
	return out, true
}

// statPPID reads the parent pid from /proc/PID/stat; the command name in
// parentheses may itself hold spaces and parentheses, so parse after the last ')'.
func statPPID(path string) (int, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

func probeHostPIDs(e *Env) outcome {
	procSelf := map[string]string{}
	mounts, err := e.readMounts()
	if err != nil {
		return outcome{target: "pid namespace", decision: Unknown, observed: "mountinfo-unreadable", detail: err.Error()}
	}
	for _, m := range mounts {
		if m.FSType == "proc" {
			// A procfs of a descendant namespace has no "self" for the caller
			// and shows no host pid; only a resolvable, different self counts.
			if link, err := os.Readlink(filepath.Join(m.MountPoint, "self")); err == nil {
				procSelf[m.MountPoint] = link
			}
		}
	}
	kthreads, listed := kernelThreads(e.Proc)
	d, o, detail := decidePIDNamespace(kthreads, listed, os.Getpid(), procSelf)
	return outcome{target: "pid namespace", decision: d, observed: o, detail: detail}
}
