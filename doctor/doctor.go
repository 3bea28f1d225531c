package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbox/agentbox/ledger"
)

// Options configures Run.
type Options struct {
	// Host is the machine examined; the zero value means Live().
	Host Host
	// SelfTest is the end-to-end proof. Nil leaves the selftest check
	// UNKNOWN, which blocks.
	SelfTest SelfTestFunc
	// Verdicts are the launcher's self-test verdicts per runtime binary,
	// by which the default runtime is chosen; nil: none known.
	Verdicts Verdicts
	// RunRoot is the run root `agentbox run` would use
	// (launcher.DoctorRunRoot); "" leaves the run-root check UNKNOWN.
	RunRoot string
	// Containerd is what the policy says of containerd: the containerd
	// check examines the daemon it would use.
	Containerd ContainerdPolicy
	// Leftovers looks for what earlier builds left unseen on the host;
	// nil: the leftovers check passes, saying it did not look.
	Leftovers LeftoversFunc
}

// Run gathers the host's facts, runs the self-test and evaluates every
// check.
func Run(ctx context.Context, o Options) Report {
	h := o.Host
	if h.Sys == nil {
		h = Live()
	}
	f := gather(ctx, h, o.Containerd)
	f.RunRoot = gatherRunRoot(h, o.RunRoot)
	f.Leftovers = gatherLeftovers(o.Leftovers)
	f.Default = chooseDefault(f, o.Verdicts)
	runSelfTest(ctx, o.SelfTest, f)
	if o.Verdicts != nil {
		f.Default = chooseDefault(f, o.Verdicts) // the self-test's own verdict counts
	}
	return Evaluate(f)
}

// Record turns a report into the ledger's doctor record: every check in
// HostVerification ("STATUS: detail", keyed by check id), each blocking
// result as a finding (so the ledger's verdict flags the record), the
// residuals, the self-test's probes, and the verdict in Notes.
func (r Report) Record(runID string, start, end time.Time, argv []string) ledger.Record {
	rec := ledger.Record{
		RunID: runID, Kind: ledger.KindDoctor, Start: start, End: end, Command: argv,
		HostVerification: map[string]string{},
		Probes:           r.Probes,
		ExitCode:         r.ExitCode(),
		Notes:            r.Verdict.Status + ": " + r.Verdict.Summary,
	}
	for _, c := range r.Checks {
		rec.HostVerification[c.ID] = fmt.Sprintf("%s: %s", c.Status, c.Detail)
		if c.Blocks() {
			rec.Findings = append(rec.Findings, ledger.Finding{Code: c.ID, Severity: "high", Subject: c.Layer, Detail: c.Detail, Fix: c.Fix})
		}
	}
	for _, res := range r.Residuals {
		rec.Residuals = append(rec.Residuals, ledger.Residual{Code: res.Code, Detail: res.Detail})
	}
	return rec
}
