package selftest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func processProbes() []Probe {
	return []Probe{
		{Name: "host-pids-invisible", Group: GroupProcess, Expect: Deny, run: probeHostPIDs,
			Summary: "the process has its own PID namespace and no procfs of another one is mounted"},
	}
}

// decidePIDNamespace: NSpid lists the pid in every namespace from the
// initial one down; a single entry means the host's PID namespace. A procfs
// whose "self" is not the caller's pid belongs to another PID namespace.
func decidePIDNamespace(nspid string, self int, procSelf map[string]string) (Decision, string, string) {
	levels := strings.Fields(nspid)
	switch {
	case len(levels) == 0:
		return Unknown, "nspid-missing", "the status file has no NSpid"
	case len(levels) == 1:
		return Allow, "host-pid-namespace", "NSpid has one level: this is the host's PID namespace"
	}
	for mp, link := range procSelf {
		if link != strconv.Itoa(self) {
			return Allow, "foreign-procfs", "the procfs at " + mp + " is of another PID namespace (self is " + link + ")"
		}
	}
	return Deny, "own-pid-namespace", "NSpid has " + strconv.Itoa(len(levels)) + " levels; every procfs shows this namespace"
}

func probeHostPIDs(e *Env) outcome {
	st, err := readStatus(e)
	if err != nil {
		return outcome{target: "pid namespace", decision: Unknown, observed: "status-unreadable", detail: err.Error()}
	}
	procSelf := map[string]string{}
	mounts, err := readMounts(e.Proc)
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
	d, o, detail := decidePIDNamespace(st["NSpid"], os.Getpid(), procSelf)
	return outcome{target: "pid namespace", decision: d, observed: o, detail: detail}
}
