package launcher

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/compose"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// Every error of every subcommand maps to its exit code through KindOf,
// wrapped or not; an error nothing classifies is the host's.
func TestKindOfMapsEveryErrorToItsExitCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"plain", errors.New("runc create: boom"), ExitHost},
		{"policy input", &policy.InputError{Field: "limits.memory", Msg: "bad"}, ExitUsage},
		{"policy input, wrapped", fmt.Errorf("plan: %w", &policy.InputError{Msg: "bad"}), ExitUsage},
		{"audit input", &audit.InputError{File: "x.json", Err: errors.New("bad")}, ExitUsage},
		{"compose input", &compose.InputError{Field: "--agent", Msg: "bad"}, ExitUsage},
		{"compose conflict", &compose.ConflictError{Dir: "/out"}, ExitUsage},
		{"evidence", &ledger.EvidenceError{Dest: "3", Msg: "bad"}, ExitUsage},
		{"policy host", &policy.HostError{What: "no runc"}, ExitHost},
		{"untrusted", &policy.UntrustedError{Path: "/ws/agentbox.yaml"}, ExitRefused},
		{"changed", &policy.ChangedError{Path: "/ws/agentbox.yaml"}, ExitRefused},
		{"refusal", refusef("the boundary failed %d probe(s)", 2), ExitRefused},
		{"planner's refusal", fmt.Errorf("identity: %w", &policy.RefusedError{What: "uid map 0→0 reaches host root"}), ExitRefused},
		{"step of a refusal", StepError("self-test", refusef("no")), ExitRefused},
		{"marked usage", WithKind(KindUsage, errors.New("ledger unreadable")), ExitUsage},
		{"marked host over input", WithKind(KindHost, &policy.InputError{Msg: "x"}), ExitHost},
		{"engine unavailable marked usage", WithKind(KindUsage, fmt.Errorf("docker: %w", audit.ErrEngineUnavailable)), ExitHost},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A step's error names the step, keeps what it wraps, and answers
// errors.Is for its kind only.
func TestStepErrorNamesTheStepAndItsKind(t *testing.T) {
	in := &policy.InputError{Field: "--accept", Msg: "want CODE=reason"}
	err := StepError("policy", in)
	if got, want := err.Error(), "policy: --accept: want CODE=reason"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	var ie *policy.InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrUsage) || errors.Is(err, ErrRefused) || errors.Is(err, ErrHost) {
		t.Errorf("%v: As InputError %v, Is usage %v, refused %v, host %v", err, errors.As(err, &ie), errors.Is(err, ErrUsage), errors.Is(err, ErrRefused), errors.Is(err, ErrHost))
	}
}
