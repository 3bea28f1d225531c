package launcher

import (
	"os"
	"runtime/debug"
)

// launchGCPercent is the collector's pace for a process that launches.
// A launch allocates about 4 MiB before the agent runs and keeps well
// under 1 MiB of it (GODEBUG=gctrace=1: "3->3->0 MB"): at Go's default of
// 100, whose smallest goal is 4 MiB, one collection falls in the launch's
// last milliseconds, on its critical path; at 200 (an 8 MiB goal) none
// does, and a launcher whose agent runs for hours still collects at a
// heap of a few MiB.
const launchGCPercent = 200

// PaceCollector sets the collector's pace of a launching process (run,
// selftest) to launchGCPercent, unless GOGC in the environment sets it.
func PaceCollector() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(launchGCPercent)
	}
}
