package containerd

import (
	"fmt"
	"os"
	"time"
)

// traceOn is whether AGENTBOX_TRACE=1 asks for the launch's step times
// (bench/abbench reads them). The launcher traces its steps; the engine
// adds the parts of the steps that are its calls to the daemon
// ("create/task", "teardown/task delete"), which the launcher cannot see.
var traceOn = os.Getenv("AGENTBOX_TRACE") == "1"

// tracer prints the parts of step on stderr, in the launcher's trace
// format, when traceOn; sink, when set, is given them instead (the
// launcher's own teardown trace).
type tracer struct {
	step string
	sink func(part string, took time.Duration)
}

// part times fn as one part of the step.
func (t tracer) part(name string, fn func()) {
	began := time.Now()
	fn()
	t.took(name, time.Since(began))
}

func (t tracer) took(name string, d time.Duration) {
	switch {
	case t.sink != nil:
		t.sink(name, d)
	case traceOn:
		fmt.Fprintf(os.Stderr, "agentbox: trace: %-16s %8.2fms\n", t.step+"/"+name, float64(d.Microseconds())/1000)
	}
}
