package doctor

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckLeftovers(t *testing.T) {
	tests := []struct {
		name   string
		fn     LeftoversFunc
		status Status
		detail string
		fix    string
	}{
		{"not wired", nil, Unknown, "no look for leftovers is wired", "sudo agentbox doctor"},
		{"not hybrid", func() (int, string, error) { return 0, "this host's cgroups are not hybrid", nil }, Pass, "nothing to look for: this host's cgroups are not hybrid", ""},
		{"not root", func() (int, string, error) { return 0, "", errors.New("only root can look") }, Unknown, "cannot look below the host's cgroup2 mount: only root can look", "sudo agentbox doctor"},
		{"clean", func() (int, string, error) { return 0, "", nil }, Pass, "no run's cgroup directory remains", ""},
		{"three left", func() (int, string, error) { return 3, "", nil }, Warn, "3 cgroup director(ies) that crun made", "agentbox gc (as root)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &Facts{Leftovers: gatherLeftovers(tc.fn)}
			rs := checkLeftovers(f)
			if len(rs) != 1 {
				t.Fatalf("%d results", len(rs))
			}
			r := rs[0]
			if r.Status != tc.status || !strings.Contains(r.Detail, tc.detail) || r.Fix != tc.fix {
				t.Errorf("got %s %q fix %q, want %s %q fix %q", r.Status, r.Detail, r.Fix, tc.status, tc.detail, tc.fix)
			}
			if r.Blocks() {
				t.Errorf("%s blocks: leftovers are host hygiene", r.Status)
			}
		})
	}
}
