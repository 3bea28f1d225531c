package doctor

import (
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/engine/advisory"
)

// RuntimeMode is what `agentbox run` does, by the advisory table, with one
// installed runtime in one mode: launch (perhaps with residual lines) or
// refuse until the runtime-vulnerable finding is fixed or accepted.
type RuntimeMode struct {
	Runtime string `json:"runtime"`
	// Mode is "default" (the root of read-only host binds) or "--rootfs".
	Mode string `json:"mode"`
	// Verdict is true for the runtime doctor's verdict is about (runc, or
	// the only runtime installed).
	Verdict bool `json:"verdict_runtime"`
	// Holds is true when run launches: no entry refuses.
	Holds bool `json:"holds"`
	// Refusals are the entries run refuses for, unless accepted
	// (runtime-vulnerable, subject KEY); Fixes the fix of each, in order.
	Refusals []string `json:"refusals,omitempty"`
	Fixes    []string `json:"fixes,omitempty"`
	// Residuals are the entries run reports as residual lines.
	Residuals []string `json:"residuals,omitempty"`
	// Refused is why run refuses the runtime in every mode, whatever the
	// advisory table says (RuntimeFacts.Refusal: a runsc without
	// --pass-fd); empty otherwise.
	Refused string `json:"refused,omitempty"`
}

// runtimeModes is every installed runtime in every mode.
func runtimeModes(f *Facts) []RuntimeMode {
	judged, err := judgeRuntimes(f)
	if err != nil {
		return nil // checkRuntimeCVEs reports the table's error, which blocks
	}
	out := []RuntimeMode{}
	for i, rt := range f.Runtimes {
		for j, m := range runModes(f) {
			rm := runtimeMode(rt.Name, m, judged[i][j], rt.Name == verdictRuntime(f))
			if rt.Refusal != "" {
				rm.Holds, rm.Refused = false, rt.Refusal
			}
			out = append(out, rm)
		}
	}
	return out
}

func runtimeMode(name string, m advisory.Mode, fs []advisory.Finding, verdict bool) RuntimeMode {
	rm := RuntimeMode{Runtime: name, Mode: m.Name(), Verdict: verdict, Holds: true}
	for _, f := range fs {
		switch {
		case f.Blocks():
			rm.Holds = false
			rm.Refusals, rm.Fixes = append(rm.Refusals, f.Key), append(rm.Fixes, f.Fix)
		case f.Residual():
			rm.Residuals = append(rm.Residuals, f.Key)
		}
	}
	return rm
}

// Summary says the mode's outcome in one line.
func (rm RuntimeMode) Summary() string {
	var s string
	if rm.Refused != "" {
		return "agentbox run refuses it (exit code 4): see runtime-" + rm.Runtime
	}
	if rm.Holds {
		s = "agentbox run launches"
	} else {
		s = fmt.Sprintf("agentbox run refuses (runtime-vulnerable: %s); fix: %s; or accept it with --accept runtime-vulnerable=REASON",
			strings.Join(rm.Refusals, ", "), strings.Join(dedupe(rm.Fixes), "; "))
	}
	if len(rm.Residuals) > 0 {
		s += fmt.Sprintf("; residuals (affected, not exposed, or low severity): %s", strings.Join(rm.Residuals, ", "))
	}
	return s
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
