package selftest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJudge(t *testing.T) {
	res := func(probe string, expect, got Decision) Result {
		return Result{Probe: probe, Expect: expect, Decision: got}
	}
	residual := []string{"prlimit-pid1-denied", "host-init-uid-separate"}
	allow := map[string]string{"dns-unresolvable": "no resolver here"}
	tests := []struct {
		name            string
		result          Result
		ex              Excuses
		failed          bool
		residualAllowed int
	}{
		{"expected deny", res("bpf-denied", Deny, Deny), Excuses{}, false, 0},
		{"expected allow", res("gateway-reachable", Allow, Allow), Excuses{}, false, 0},
		{"allow where deny was expected", res("bpf-denied", Deny, Allow), Excuses{}, true, 0},
		{"deny where allow was expected", res("gateway-reachable", Allow, Deny), Excuses{Residual: []string{"gateway-reachable"}}, true, 0},
		{"unknown fails closed", res("dns-unresolvable", Deny, Unknown), Excuses{}, true, 0},
		{"unknown accepted with a reason", res("dns-unresolvable", Deny, Unknown), Excuses{AllowUnknown: allow}, false, 0},
		{"an accepted unknown's allow still fails", res("dns-unresolvable", Deny, Allow), Excuses{AllowUnknown: allow}, true, 0},
		{"allow a residual names", res("prlimit-pid1-denied", Deny, Allow), Excuses{Residual: residual}, false, 1},
		{"allow a residual does not name", res("kill-pid1-denied", Deny, Allow), Excuses{Residual: residual}, true, 0},
		{"unknown of a probe a residual names", res("host-init-uid-separate", Deny, Unknown), Excuses{Residual: residual}, true, 0},
		{"unknown accepted for another probe", res("internet-unreachable", Deny, Unknown), Excuses{AllowUnknown: allow}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge([]Result{tt.result}, tt.ex)
			if (len(v.Failed) == 1) != tt.failed || v.ResidualAllowed != tt.residualAllowed {
				t.Errorf("verdict %+v: want failed=%v residual-allowed=%d", v, tt.failed, tt.residualAllowed)
			}
		})
	}
}

// Judge keeps the order of the results it fails, and counts across them.
func TestJudgeKeepsOrder(t *testing.T) {
	rs := []Result{
		{Probe: "a", Expect: Deny, Decision: Allow},
		{Probe: "b", Expect: Deny, Decision: Allow},
		{Probe: "c", Expect: Deny, Decision: Deny},
		{Probe: "d", Expect: Deny, Decision: Unknown},
	}
	v := Judge(rs, Excuses{Residual: []string{"b"}})
	if d := cmp.Diff([]Result{rs[0], rs[3]}, v.Failed); d != "" || v.ResidualAllowed != 1 {
		t.Errorf("failed (-want +got):\n%s\nresidual-allowed %d", d, v.ResidualAllowed)
	}
}
