package denials

import (
	"fmt"
	"strconv"
	"strings"
)

// minRuntime is the first release of each OCI runtime that sends the
// notification fd to linux.seccomp.listenerPath (runc 1.1.0; crun 0.19,
// well before Debian 12's 1.8.1).
var minRuntime = map[string][2]int{"runc": {1, 1}, "crun": {0, 19}}

// RuntimeSupport returns nil when runtime name at version (as it reports
// it: "1.1.5", "1.8.1+ds1") hands the listener its fd, else why not.
func RuntimeSupport(name, version string) error {
	want, ok := minRuntime[name]
	if !ok {
		return fmt.Errorf("agentbox does not know whether %s sends the seccomp notification fd to linux.seccomp.listenerPath (runc 1.1 and crun do)", name)
	}
	got, ok := majorMinor(version)
	if !ok {
		return fmt.Errorf("%s reports no version agentbox can read (%q); runc 1.1 and crun 0.19 are the first to send the seccomp notification fd", name, version)
	}
	if got[0] < want[0] || (got[0] == want[0] && got[1] < want[1]) {
		return fmt.Errorf("%s %s is older than %d.%d, the first to send the seccomp notification fd to linux.seccomp.listenerPath", name, version, want[0], want[1])
	}
	return nil
}

func majorMinor(v string) ([2]int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return [2]int{}, false
	}
	return [2]int{major, minor}, true
}
