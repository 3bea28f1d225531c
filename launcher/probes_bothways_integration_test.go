//go:build integration && linux

package launcher

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/selftest"
)

// TestProbesWeakenedAsRoot shows every probe's other side: each row of
// probeTable, in the sandbox or host run it names, must report the
// opposite of its hardened decision. Three sandboxes and at most two host
// runs cover the whole catalog.
func TestProbesWeakenedAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "runc", "runc")
	sites := weakenedSites(t)
	want := expectations()
	names := make([]string, 0, len(probeTable))
	for name := range probeTable {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		row := probeTable[name]
		t.Run(name, func(t *testing.T) {
			checkWeakened(t, name, row, want[name], sites)
		})
	}
}

// weakenedRuns holds every weakened run's results, by site, and the
// stand-in host run.
type weakenedRuns struct {
	sites    map[flipSite]map[string]selftest.Result
	standIns map[string]selftest.Result
	lacking  map[string]bool
}

// weakenedSites builds the three weakened sandboxes and runs the host
// probes, with stand-ins for what this kernel lacks.
func weakenedSites(t *testing.T) weakenedRuns {
	t.Helper()
	w := weakenedRuns{sites: map[flipSite]map[string]selftest.Result{}, lacking: map[string]bool{}}
	kernel := kernelSandbox(t).run(t)
	boundary := boundarySandbox(t).run(t)
	n := newTestNet(t)
	netSandbox := networkSandbox(t, n)
	var network probeOutcome
	inNetns(t, n.sandbox, func() { network = netSandbox.run(t) })
	for site, o := range map[flipSite]probeOutcome{siteKernel: kernel, siteBoundary: boundary, siteNetwork: network} {
		if o.code != ExitFindings {
			t.Errorf("%s: selftest exit %d, want %d (failed probes)\n%s", site, o.code, ExitFindings, o.output)
		}
		w.sites[site] = o.results
	}
	var onHost, standInNames []string
	var standIns []standIn
	for name, row := range probeTable {
		w.lacking[name] = kernelLacks(t, row.object)
		switch {
		case w.lacking[name] && row.standIn.file != "":
			standInNames, standIns = append(standInNames, name), append(standIns, row.standIn)
		case row.site == siteHost:
			onHost = append(onHost, name)
		}
	}
	w.sites[siteHost] = hostProbes(t, onHost, nil)
	w.standIns = hostProbes(t, standInNames, standIns)
	return w
}

// checkWeakened asserts one row: the probe reports the opposite of
// hardened where the row says; a host-only probe is, besides, still
// refused in the kernel sandbox, which has every capability and no
// seccomp filter, as the row's reason claims.
func checkWeakened(t *testing.T, name string, row probeRow, hardened selftest.Decision, w weakenedRuns) {
	want := weakenedDecision(hardened)
	res, where := w.sites[row.site], string(row.site)
	switch {
	case w.lacking[name] && row.standIn.file != "":
		res, where = w.standIns, "a stand-in "+row.standIn.file+" on the host (this kernel has no "+row.object+")"
	case w.lacking[name]:
		r := w.sites[row.site][name]
		if r.Decision != selftest.Deny || (r.Observed != "ENOSYS" && r.Observed != "absent") {
			t.Errorf("%s: %s %s on the host, whose kernel has no %s: want DENY ENOSYS or absent (%s)", name, r.Decision, r.Observed, row.object, r.Detail)
		}
		t.Logf("%s: ALLOW side NOT SHOWN: this kernel has no %s, so nothing can do what the probe tries (host root observed %s)", name, row.object, r.Observed)
		return
	}
	checkFlip(t, name, res[name], where, want, row.how, row.observed)
	for _, a := range row.also {
		checkFlip(t, name, w.sites[a.site][name], string(a.site), want, a.how, a.observed)
	}
	if row.site == siteHost {
		if k := w.sites[siteKernel][name]; k.Decision == selftest.Allow {
			t.Errorf("%s: ALLOW %s in the kernel sandbox: a sandbox can flip it after all; move it to siteKernel (%s)", name, k.Observed, k.Detail)
		}
	}
}

// checkFlip asserts one weakened result: the decision wanted and, when
// given, the observation that says why.
func checkFlip(t *testing.T, name string, r selftest.Result, where string, want selftest.Decision, how, observed string) {
	t.Helper()
	switch {
	case r.Probe == "":
		t.Errorf("%s: no result from %s", name, where)
	case r.Decision != want:
		t.Errorf("%s: %s %s in %s, want %s after %s (%s)", name, r.Decision, r.Observed, where, want, how, r.Detail)
	case observed != "" && !slices.Contains(strings.Split(r.Observed, ","), observed):
		t.Errorf("%s: %s %s in %s, want the observation %q after %s (%s)", name, r.Decision, r.Observed, where, observed, how, r.Detail)
	default:
		t.Logf("%s: %s %s in %s (%s)", name, r.Decision, r.Observed, where, how)
	}
}

// weakenedDecision is what a weakened layer must make a probe report: the
// opposite of its hardened decision.
func weakenedDecision(hardened selftest.Decision) selftest.Decision {
	if hardened == selftest.Allow {
		return selftest.Deny
	}
	return selftest.Allow
}
