package launcher

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/selftest"
)

// agentHostPID is selftest.HostPID (the host pid of init's child whose pid
// in its own PID namespace is inside) looked up among init's children
// alone: /proc/INIT/task/*/children names them, where HostPID reads the
// status of every process on the host (about 10 ms on a host of a hundred
// processes). Each candidate is checked as HostPID checks it (its parent
// is init, its innermost pid is inside), so a pid reused in between is
// refused the same way. Where the children files cannot be read (a kernel
// without them), it is HostPID.
func agentHostPID(procRoot string, init, inside int) (int, error) {
	tasks, err := os.ReadDir(filepath.Join(procRoot, strconv.Itoa(init), "task"))
	if err != nil {
		return selftest.HostPID(procRoot, init, inside)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(init), "task", t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && isChildAt(procRoot, pid, init, inside) {
				return pid, nil
			}
		}
	}
	return selftest.HostPID(procRoot, init, inside) // not found so: HostPID decides, and says why
}

// isChildAt reports whether host process pid is a child of parent whose
// pid in its innermost PID namespace is inside.
func isChildAt(procRoot string, pid, parent, inside int) bool {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	st := selftest.ParseStatus(b)
	ns := strings.Fields(st["NSpid"])
	return st["PPid"] == strconv.Itoa(parent) && len(ns) > 0 && ns[len(ns)-1] == strconv.Itoa(inside)
}
