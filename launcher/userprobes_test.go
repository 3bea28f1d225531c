package launcher

import (
	"runtime"
	"slices"
	"testing"

	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/selftest"
)

// darwinPlan is a plan with the darwin residuals' probe lists.
func darwinPlan() *policy.Plan {
	return &policy.Plan{Residuals: []policy.Residual{
		{Code: policy.ResidualDarwinShared, Probes: policy.DarwinSharedProbes, Unprobed: policy.DarwinSharedUnprobed},
		{Code: policy.ResidualDarwinSyscalls, Unprobed: policy.DarwinSyscallUnprobed},
		{Code: policy.ResidualDarwinNoSeccomp, Unprobed: policy.DarwinNoSeccompUnprobed},
		{Code: policy.ResidualDarwinNoProcfs, Unprobed: policy.DarwinProcfsUnprobed},
		{Code: "user-no-terminal"},
	}}
}

// The darwin residuals name probes of darwin's catalog, and darwin's own
// probes are only there: the names policy plans by are selftest's.
func TestDarwinResidualProbesExist(t *testing.T) {
	darwin, linux := selftest.CatalogFor("darwin"), selftest.CatalogFor("linux")
	has := func(c []selftest.Probe, name string) bool {
		return slices.ContainsFunc(c, func(p selftest.Probe) bool { return p.Name == name })
	}
	for _, l := range [][]string{policy.DarwinSharedProbes, policy.DarwinSharedUnprobed, policy.DarwinSyscallUnprobed, policy.DarwinNoSeccompUnprobed, policy.DarwinProcfsUnprobed} {
		for _, name := range l {
			if !has(darwin, name) {
				t.Errorf("a darwin residual names %q, which darwin's catalog does not hold", name)
			}
		}
	}
	for _, name := range policy.DarwinProbes {
		if !has(darwin, name) || has(linux, name) {
			t.Errorf("policy.DarwinProbes names %q: in darwin's catalog %v, in linux's %v", name, has(darwin, name), has(linux, name))
		}
	}
}

// A darwin plan's self-test runs every probe of darwin's catalog but the
// unprobed, darwin's own among them; a Linux plan's runs the whole catalog
// (nil), as before.
func TestPlanProbes(t *testing.T) {
	catalog := selftest.CatalogFor("darwin")
	run := planProbes(darwinPlan(), catalog)
	unprobed := darwinPlan().Unprobed()
	if len(run)+len(unprobed) != len(catalog) {
		t.Errorf("%d probes run and %d are taken out, of %d", len(run), len(unprobed), len(catalog))
	}
	for _, name := range unprobed {
		if slices.Contains(run, name) {
			t.Errorf("%s runs, though a residual takes it out", name)
		}
	}
	for _, name := range append(slices.Clone(policy.DarwinProbes), policy.DarwinSharedProbes...) {
		if !slices.Contains(run, name) {
			t.Errorf("%s does not run", name)
		}
	}
	cfg := selftest.InitConfig{Version: selftest.ProtocolVersion, Probes: run}
	if runtime.GOOS != "darwin" {
		// Selected checks names against this OS's catalog, which lacks darwin's own here.
		cfg.Probes = slices.DeleteFunc(slices.Clone(run), func(n string) bool { return slices.Contains(policy.DarwinProbes, n) })
	}
	sel, err := selftest.Selected(&cfg)
	if err != nil || len(sel) != len(cfg.Probes) {
		t.Errorf("Selected: %d probes, %v; want %d", len(sel), err, len(cfg.Probes))
	}
	linuxUser := &policy.Plan{Residuals: []policy.Residual{{Code: policy.ResidualUserShared, Probes: policy.UserSharedProbes}}}
	if got := planProbes(linuxUser, selftest.Catalog()); got != nil {
		t.Errorf("a Linux user plan selects %v, want every probe (nil)", got)
	}
}
