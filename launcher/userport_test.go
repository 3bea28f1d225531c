package launcher

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/policy"
)

func TestDarwinIsolationChoosesTheAccountAndSaysSo(t *testing.T) {
	p, note := darwinIsolation(policy.Policy{Workspace: "/w"})
	if p.Isolation != policy.IsolationUser || policy.TargetOf(p) != policy.TargetUser || p.Workspace != "/w" {
		t.Errorf("darwinIsolation chose %+v", p)
	}
	if !strings.Contains(note, "_agentbox") || !strings.Contains(note, "--isolation user") || strings.Contains(note, "\n") {
		t.Errorf("note %q: want one line naming the account and the flag", note)
	}
	if _, note := darwinIsolation(policy.Policy{Isolation: policy.IsolationUser}); note != "" {
		t.Errorf("a policy that asked for it got the note %q", note)
	}
}
