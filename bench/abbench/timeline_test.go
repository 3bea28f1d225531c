package main

import (
	"strings"
	"testing"
	"time"
)

// The events of one launch come from perf's exec and exit records and
// agentbox's stamped trace lines, each as its time since agentbox's exec;
// init's /proc/self/exe is the agent's process, whose exec of true is the
// agent; a second one (older builds) is the agent's starter.
func TestTimelineEvents(t *testing.T) {
	perf := `
        agentbox  100/100  50.000000:     sched:sched_process_exec: filename=/work/bin/agentbox pid=100 old_pid=100
            runc  110/110  50.020000:     sched:sched_process_exec: filename=/usr/sbin/runc pid=110 old_pid=110
             exe  111/111  50.030000:     sched:sched_process_exec: filename=/proc/self/exe pid=111 old_pid=111
            init  120/120  50.070000:     sched:sched_process_exec: filename=/.agentbox/init pid=120 old_pid=120
             exe  121/121  50.074000:     sched:sched_process_exec: filename=/proc/self/exe pid=121 old_pid=121
             exe  122/122  50.076000:     sched:sched_process_exec: filename=/proc/self/exe pid=122 old_pid=122
             exe  121/125  50.089000:     sched:sched_process_exit: comm=exe pid=125 prio=120 group_dead=false
             exe  121/121  50.090000:     sched:sched_process_exit: comm=exe pid=121 prio=120 group_dead=true
            true  122/122  50.100000:     sched:sched_process_exec: filename=/usr/bin/true pid=122 old_pid=122
            true  122/122  50.101000:     sched:sched_process_exit: comm=true pid=122 prio=120 group_dead=true
            runc  110/110  50.105000:     sched:sched_process_exit: comm=runc pid=110 prio=120 group_dead=true
        agentbox  100/100  50.115000:     sched:sched_process_exit: comm=agentbox pid=100 prio=120 group_dead=true
`
	stderr := "agentbox: trace: policy               0.10ms @50.005000\n" +
		"agentbox: trace: create              50.00ms @50.071500\n" +
		"agentbox: note that is not a trace line @51\n" +
		"agentbox: trace: teardown/bundle      1.00ms @50.110000\n"
	ev, err := timelineEvents(perf, stderr, "agentbox", "runc")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"agentbox exec": 0, "runtime exec": 20, "init exec": 70, "agent's process exec": 74, "starter exec": 76,
		"agent's process exit": 90, "agent exec": 100, "agent exit": 101, "runtime exit": 105, "agentbox exit": 115,
		"policy ends": 5, "create ends": 71.5, "teardown/bundle ends": 110,
	}
	for name, msec := range want {
		got, ok := ev[name]
		if d := got - time.Duration(msec*float64(time.Millisecond)); !ok || d > time.Microsecond || d < -time.Microsecond {
			t.Errorf("%s: %v (%v), want %v ms", name, got, ok, msec)
		}
		delete(ev, name)
	}
	if len(ev) > 0 {
		t.Errorf("unexpected events %v", ev)
	}
	// This build's shape: one child of init, which executes the agent.
	one := `
        agentbox  100/100  50.000000:     sched:sched_process_exec: filename=/work/bin/agentbox pid=100 old_pid=100
            init  120/120  50.070000:     sched:sched_process_exec: filename=/.agentbox/init pid=120 old_pid=120
             exe  121/121  50.074000:     sched:sched_process_exec: filename=/proc/self/exe pid=121 old_pid=121
            true  121/121  50.100000:     sched:sched_process_exec: filename=/usr/bin/true pid=121 old_pid=121
            true  121/121  50.101000:     sched:sched_process_exit: comm=true pid=121 prio=120 group_dead=true
`
	ev, err = timelineEvents(one, "", "agentbox", "runc")
	near := func(name string, msec float64) bool {
		d := ev[name] - time.Duration(msec*float64(time.Millisecond))
		return d <= time.Microsecond && d >= -time.Microsecond
	}
	if err != nil || !near("agent's process exec", 74) || !near("agent exec", 100) || !near("agent exit", 101) {
		t.Errorf("one child: %v %v", ev, err)
	}
	if _, err := timelineEvents(perf, stderr, "agentbox-ext", "runc"); err == nil {
		t.Error("no exec of the binary: want an error")
	}
	report := timelineReport([]map[string]time.Duration{{"a": 2 * time.Millisecond, "b": time.Millisecond}})
	if !strings.Contains(report, "b ") || strings.Index(report, "  b ") > strings.Index(report, "  a ") {
		t.Errorf("report not in time order:\n%s", report)
	}
}

// A trace line stamped by AGENTBOX_TRACE_CLOCK=1 is the same step to the
// launch report as an unstamped one.
func TestParseTraceIgnoresTheClockStamp(t *testing.T) {
	steps := parseTrace("agentbox: trace: create              50.00ms @50.071500\n")
	if len(steps) != 1 || steps[0].name != "create" || steps[0].d != 50*time.Millisecond {
		t.Errorf("steps %+v", steps)
	}
}
