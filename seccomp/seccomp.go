// Package seccomp reads, judges, validates and compiles seccomp profiles.
//
// agentbox's own profile is data in the subpackage profiles. This package
// works on the runtime-spec form (*specs.LinuxSeccomp), so the same code
// serves agentbox's profile and someone else's:
//
//   - LoadFile parses a Docker, Podman or OCI seccomp JSON file and resolves
//     Docker's conditional rules (includes/excludes by capability,
//     architecture and kernel) for a container.
//   - Check and Weaknesses (pure Go) tell which of the dangerous syscalls
//     agentbox refuses a profile would let through, outright or for some
//     argument values. The audit reports them as seccomp-profile-weak.
//   - Compile (pure Go, any build) turns a profile for x86_64 or aarch64
//     into the classic BPF program the kernel loads, with the decisions
//     libseccomp gives it the way runc adds it; --isolation user loads its
//     output, since no OCI runtime compiles a filter there.
//   - Validate and CompileLibseccomp use libseccomp through
//     github.com/seccomp/libseccomp-golang: every name must resolve on the
//     target architecture, and the filter is built into BPF the way runc
//     builds it; CompileLibseccomp is the reference Compile is tested
//     against. They need cgo and libseccomp (libseccomp-dev to build);
//     without them they return ErrNotSupported, and only when called.
//
// What seccomp does not defend against: syscalls the profile allows are
// reachable with any argument it does not filter (ioctl, for example, is
// allowed in full), and every allowed syscall is kernel attack surface. The
// filter refuses calls; it does not restrict which files, hosts or
// processes an allowed call reaches. Mounts, namespaces and the LSM do that.
package seccomp

import (
	"errors"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// ErrNotSupported is returned by Validate, CompileLibseccomp and
// LibseccompVersion in a binary built without cgo or for an OS other than
// Linux.
var ErrNotSupported = errors.New("seccomp: libseccomp support not compiled in (build with CGO_ENABLED=1 on Linux and install libseccomp-dev)")

// Verdict is what a profile does with one call.
type Verdict int

// The verdicts, from safest to weakest.
const (
	// Refused: the call fails whatever its other arguments.
	Refused Verdict = iota
	// Supervised: a tracer or a SCMP_ACT_NOTIFY supervisor decides.
	Supervised
	// AllowedSomeArgs: the call goes through for some argument values.
	AllowedSomeArgs
	// Allowed: the call goes through whatever its other arguments.
	Allowed
)

// String names v as reports write it.
func (v Verdict) String() string {
	switch v {
	case Refused:
		return "refused"
	case Supervised:
		return "left to a user-space supervisor"
	case AllowedSomeArgs:
		return "allowed for some arguments"
	case Allowed:
		return "allowed"
	}
	return "unknown verdict"
}

// Weakness is one dangerous call a profile does not refuse.
type Weakness struct {
	// Call is the syscall name, or the labelled call for argument-specific
	// denials such as "clone(CLONE_NEWUSER)".
	Call string
	// Syscall is the syscall's name.
	Syscall string
	// Verdict is Allowed, AllowedSomeArgs or Supervised.
	Verdict Verdict
}

// String renders w as Weaknesses does.
func (w Weakness) String() string {
	if w.Verdict == Allowed {
		return w.Call
	}
	return w.Call + " (" + w.Verdict.String() + ")"
}

// Check returns the calls agentbox refuses that p does not: first each of
// profiles.DeniedSyscalls in order, then each of profiles.DeniedCalls. A nil
// profile (no seccomp at all) allows everything. An action this package does
// not know is taken to allow the call, so that the audit errs towards a
// finding. Only the filter is judged: a capability the container lacks
// (CAP_NET_RAW for raw sockets, say) may refuse the call as well.
func Check(p *specs.LinuxSeccomp) []Weakness {
	var out []Weakness
	for _, name := range profiles.DeniedSyscalls() {
		if v := Evaluate(p, name, nil); v != Refused {
			out = append(out, Weakness{Call: name, Syscall: name, Verdict: v})
		}
	}
	for _, c := range profiles.DeniedCalls() {
		if v := Evaluate(p, c.Name, c.Args); v != Refused {
			out = append(out, Weakness{Call: c.Label, Syscall: c.Name, Verdict: v})
		}
	}
	return out
}

// Weaknesses is Check as text: one entry per weak call, the bare name when
// the profile allows it outright ("mount"), otherwise followed by the
// verdict in parentheses ("mount (allowed for some arguments)",
// "socket(AF_PACKET) (left to a user-space supervisor)").
func Weaknesses(p *specs.LinuxSeccomp) []string {
	var out []string
	for _, w := range Check(p) {
		out = append(out, w.String())
	}
	return out
}

// Evaluate tells what p does with a call of syscall name whose arguments
// listed in fixed have those values and whose other arguments may hold
// anything. It follows runc: the conditions of one rule are ANDed, except
// that several conditions on the same argument become separate, ORed rules.
func Evaluate(p *specs.LinuxSeccomp, name string, fixed []profiles.ArgValue) Verdict {
	if p == nil {
		return Allowed
	}
	var best [3]match // per action class, the strongest match of any rule
	for _, r := range p.Syscalls {
		if !slices.Contains(r.Names, name) {
			continue
		}
		c := classify(r.Action)
		best[c] = max(best[c], ruleMatch(r.Args, fixed))
	}
	switch {
	case best[permit] == always:
		return Allowed
	case best[supervise] == always:
		return Supervised
	case best[permit] == maybe:
		return AllowedSomeArgs
	case best[supervise] == maybe:
		return Supervised
	case best[refuse] == always:
		return Refused
	}
	switch classify(p.DefaultAction) {
	case permit:
		if best[refuse] == maybe {
			return AllowedSomeArgs
		}
		return Allowed
	case supervise:
		return Supervised
	default:
		// a refusing default: below
	}
	return Refused
}

type class int

const (
	refuse class = iota
	supervise
	permit
)

func classify(a specs.LinuxSeccompAction) class {
	switch a {
	case specs.ActErrno, specs.ActKill, specs.ActKillThread, specs.ActKillProcess, specs.ActTrap:
		return refuse
	case specs.ActTrace, specs.ActNotify:
		return supervise
	default:
		// allow, log and unknown actions let the call through: below
	}
	return permit // SCMP_ACT_ALLOW, SCMP_ACT_LOG and anything unknown
}

// match is how surely a rule matches a call: never, for some values of the
// arguments left open, or always.
type match int

const (
	never match = iota
	maybe
	always
)

// ruleMatch evaluates one rule's conditions against the fixed arguments.
func ruleMatch(args []specs.LinuxSeccompArg, fixed []profiles.ArgValue) match {
	if len(args) == 0 {
		return always
	}
	if sharesIndex(args) { // runc adds one rule per condition: OR
		m := never
		for _, a := range args {
			m = max(m, condMatch(a, fixed))
		}
		return m
	}
	m := always
	for _, a := range args {
		m = min(m, condMatch(a, fixed))
	}
	return m
}

func sharesIndex(args []specs.LinuxSeccompArg) bool {
	seen := map[uint]bool{}
	for _, a := range args {
		if seen[a.Index] {
			return true
		}
		seen[a.Index] = true
	}
	return false
}

// condMatch is always or never when the argument is fixed, else maybe: some
// value of a free argument satisfies any condition but an impossible one,
// and telling those apart is not worth a false "refused".
func condMatch(a specs.LinuxSeccompArg, fixed []profiles.ArgValue) match {
	for _, f := range fixed {
		if f.Index == a.Index {
			if compare(a, f.Value) {
				return always
			}
			return never
		}
	}
	return maybe
}

func compare(a specs.LinuxSeccompArg, v uint64) bool {
	switch a.Op {
	case specs.OpNotEqual:
		return v != a.Value
	case specs.OpLessThan:
		return v < a.Value
	case specs.OpLessEqual:
		return v <= a.Value
	case specs.OpEqualTo:
		return v == a.Value
	case specs.OpGreaterEqual:
		return v >= a.Value
	case specs.OpGreaterThan:
		return v > a.Value
	case specs.OpMaskedEqual:
		// libseccomp masks the datum too, and so does Compile: a datum
		// with bits outside the mask still matches what the filter matches.
		return v&a.Value == a.ValueTwo&a.Value
	}
	return true // unknown operator: assume it lets the call through
}
