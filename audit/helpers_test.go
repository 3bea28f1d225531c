package audit

import "github.com/agentbox/agentbox/policy"

// acceptAll accepts every code for one reason, for any subject.
func acceptAll(reason string, codes ...string) []policy.Acceptance {
	out := make([]policy.Acceptance, len(codes))
	for i, c := range codes {
		out[i] = policy.Acceptance{Code: c, Reason: reason}
	}
	return out
}
