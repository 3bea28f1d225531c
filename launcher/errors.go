package launcher

import (
	"errors"
	"fmt"

	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/ledger"
	"github.com/agentbox/agentbox/policy"
)

// Exit codes shared by every subcommand (DESIGN.md §5). `run` passes the
// agent's own exit code through instead.
const (
	ExitOK       = 0 // success
	ExitFindings = 1 // findings or failed probes
	ExitUsage    = 2 // usage error or bad input
	ExitRefused  = 3 // boundary refused before launch
	ExitHost     = 4 // host cannot provide the boundary
)

// Kind is what a failure means, and so its exit code. The kinds are also
// sentinel errors: errors.Is(err, launcher.ErrRefused) holds for an *Error
// of that kind.
type Kind int

const (
	// KindHost: the host cannot provide the boundary (exit 4). An error
	// nothing classifies is of this kind.
	KindHost Kind = iota
	// KindUsage: a usage error or bad input (exit 2).
	KindUsage
	// KindRefused: the boundary was refused before the launch (exit 3).
	KindRefused
)

// The kinds as sentinels, for errors.Is.
var (
	ErrHost    error = KindHost
	ErrUsage   error = KindUsage
	ErrRefused error = KindRefused
)

func (k Kind) Error() string {
	switch k {
	case KindUsage:
		return "usage error or bad input"
	case KindRefused:
		return "boundary refused"
	case KindHost:
	}
	return "the host cannot provide the boundary"
}

// ExitCode is the process exit code of a failure of kind k.
func (k Kind) ExitCode() int {
	switch k {
	case KindUsage:
		return ExitUsage
	case KindRefused:
		return ExitRefused
	case KindHost:
	}
	return ExitHost
}

// Error is a failure with its kind and, for a step of the pipeline, the
// step's name (its message then starts with it: "policy: …").
type Error struct {
	Step string
	Kind Kind
	Err  error
}

func (e *Error) Error() string {
	if e.Step == "" {
		return e.Err.Error()
	}
	return e.Step + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(e, ErrUsage) and its siblings hold for e's kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// StepError is err as the failure of the named step, of the kind KindOf
// gives it.
func StepError(step string, err error) error {
	return &Error{Step: step, Kind: KindOf(err), Err: err}
}

// WithKind marks err as a failure of kind k (a subcommand's own knowledge
// of what an error means, such as "whatever audit cannot load is bad
// input"); KindOf still lets a host failure underneath win.
func WithKind(k Kind, err error) error { return &Error{Kind: k, Err: err} }

// KindOf is the one mapper from an error to its kind, for every
// subcommand: a container engine that does not answer is the host's; then
// an *Error's own kind; a refusal (the launcher's or the planner's), an
// untrusted workspace policy or one changed since it was reviewed is a
// refused boundary; bad input of any package (policy, audit, compose, the
// evidence channel) is a usage error; anything else is the host's.
func KindOf(err error) Kind {
	var (
		e         *Error
		ref       *refusal
		untrusted *policy.UntrustedError
		changed   *policy.ChangedError
		prefused  *policy.RefusedError
		pin       *policy.InputError
		ain       *audit.InputError
		usage     usageError
		evidence  *ledger.EvidenceError
	)
	switch {
	case errors.Is(err, audit.ErrEngineUnavailable):
		return KindHost
	case errors.As(err, &e):
		return e.Kind
	case errors.As(err, &pin), errors.As(err, &ain), errors.As(err, &evidence), errors.As(err, &usage) && usage.UsageError():
		return KindUsage
	case errors.As(err, &ref), errors.As(err, &prefused), errors.As(err, &untrusted), errors.As(err, &changed):
		return KindRefused
	}
	return KindHost
}

// usageError is the bad input of a package the launcher does not link
// (compose's InputError and ConflictError, which the launch binary
// leaves to agentbox-ext): it says so itself.
type usageError interface {
	error
	UsageError() bool
}

// ExitCode is the exit code of err: 0 for nil, else its kind's.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	return KindOf(err).ExitCode()
}

// refusal is a boundary the launch will not hand over.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// refusef is a refusal with a formatted message.
func refusef(format string, a ...any) error { return &refusal{fmt.Sprintf(format, a...)} }
