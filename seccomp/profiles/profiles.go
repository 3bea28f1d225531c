// Package profiles holds agentbox's seccomp profile as data: one rule per
// group of syscalls, each with the reason it is there and the kernel it needs.
//
// The profile is an allowlist. A syscall that no rule names gets the default
// action, SCMP_ACT_ERRNO with EPERM, so anything the kernel adds later is
// refused until someone writes a rule and a reason for it. The starting point
// was Docker's default profile (moby/profiles); on top of what Docker already
// refuses, agentbox also refuses everything an agent has no business with:
// mounting and the new mount API, ptrace and cross-process memory access,
// kexec and kernel modules, the key retention service, bpf, perf events,
// userfaultfd, io_uring, unshare and setns, clone with any CLONE_NEW* flag,
// file handles, packet and raw sockets, netlink protocols other than
// NETLINK_ROUTE, and the syscalls Docker grants only to a container holding a
// capability (the sandbox holds none). clone3 answers ENOSYS rather than EPERM
// so that libc falls back to clone, whose flags a seccomp filter can inspect.
//
// The filter names only the native architecture (SCMP_ARCH_X86_64 or
// SCMP_ARCH_AARCH64). A syscall made through another ABI of the same CPU (the
// i386 int 0x80 entry or x32 on x86_64, AArch32 on arm64) then meets
// libseccomp's bad-architecture action, which kills the calling thread, so the
// argument filters cannot be sidestepped through a compat entry point.
//
// Everything here is pure data and pure Go. Validation and compilation with
// libseccomp live in the parent package seccomp. The JSON files next to this
// package (agentbox-amd64.json, agentbox-arm64.json) are generated from this
// data by `go generate ./seccomp/...`; a test fails when they are stale.
//
// To run an agent with a different profile, render your own Profile value (or
// load a Docker profile with seccomp.LoadFile) and hand its OCI form to the
// spec options; DeniedSyscalls tells what a replacement must keep refusing for
// the audit to stay quiet.
package profiles

import (
	"fmt"
	"runtime"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Version is a dotted version number: a kernel release such as 5.3 or a
// libseccomp release such as 2.5.5.
type Version struct {
	Major, Minor, Patch int
}

// String formats v as "major.minor", with ".patch" when Patch is set.
func (v Version) String() string {
	if v.Patch != 0 {
		return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// Less reports whether v is an older version than w.
func (v Version) Less(w Version) bool {
	return slices.Compare([]int{v.Major, v.Minor, v.Patch}, []int{w.Major, w.Minor, w.Patch}) < 0
}

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return v == Version{} }

// Rule is one entry of a profile: the syscalls it names, what happens when
// they are called (and with which arguments), and why.
type Rule struct {
	// Names are the syscalls the rule applies to, as libseccomp spells them.
	Names []string
	// Action is what the filter does when a call matches.
	Action specs.LinuxSeccompAction
	// ErrnoRet is the errno returned for SCMP_ACT_ERRNO; zero means the
	// profile's default errno.
	ErrnoRet uint
	// Args are conditions on the syscall's arguments, all of which must hold
	// for the rule to match (seccomp ANDs the conditions of one rule and ORs
	// separate rules). No two conditions may test the same argument: runc
	// splits those into separate, ORed rules. Empty means any arguments.
	Args []specs.LinuxSeccompArg
	// Arches restricts the rule to these architectures; empty means every
	// architecture in Arches().
	Arches []specs.Arch
	// MinKernel is the first Linux release that has every syscall in Names.
	// On an older kernel the rule is harmless: the syscall does not exist.
	MinKernel Version
	// MinLibseccomp is the first libseccomp release that knows every name in
	// Names; zero means any release agentbox supports. An older libseccomp
	// (runc and crun ignore names they cannot resolve) leaves the syscall to
	// the default action.
	MinLibseccomp Version
	// Reason says why the rule is there. Every rule has one.
	Reason string
}

// Denial names syscalls the profile refuses on purpose, with the reason.
// Denials are documentation and audit input; the filter refuses them through
// its default action.
type Denial struct {
	Names  []string
	Reason string
}

// Profile is a seccomp profile as data.
type Profile struct {
	// Name identifies the profile in generated files and ledger records.
	Name string
	// DefaultAction applies to every syscall no rule matches.
	DefaultAction specs.LinuxSeccompAction
	// DefaultErrnoRet is the errno of an SCMP_ACT_ERRNO default action.
	DefaultErrnoRet uint
	// Rules are the exceptions to the default action, in order.
	Rules []Rule
	// Denied lists the dangerous syscalls that no rule allows, with reasons.
	Denied []Denial
	// DeniedCalls lists argument-specific calls the rules must not allow
	// (clone with CLONE_NEWUSER, socket(AF_PACKET), ...).
	DeniedCalls []Call
	// Logged names the denied syscalls whose attempts a supervisor may
	// record (LoggedOCI); empty: none, every denial is the default action.
	Logged Logged
}

// Call is one syscall invocation with the argument values that matter; the
// other arguments may hold anything.
type Call struct {
	// Label is how the call is written in reports, e.g. "socket(AF_PACKET)".
	Label string
	// Name is the syscall.
	Name string
	// Args are the fixed argument values.
	Args []ArgValue
	// Reason says why the call must be refused.
	Reason string
}

// ArgValue fixes one argument of a Call.
type ArgValue struct {
	Index uint
	Value uint64
}

// Arches returns the architectures agentbox has a profile for, in the order
// the generated files are written.
func Arches() []specs.Arch {
	return []specs.Arch{specs.ArchX86_64, specs.ArchAARCH64}
}

var goArches = map[string]specs.Arch{
	"amd64": specs.ArchX86_64,
	"arm64": specs.ArchAARCH64,
}

// ArchForGOARCH maps a Go architecture name (amd64, arm64) to the seccomp
// architecture of its native ABI. It fails for architectures agentbox has no
// profile for.
func ArchForGOARCH(goarch string) (specs.Arch, error) {
	a, ok := goArches[goarch]
	if !ok {
		return "", fmt.Errorf("seccomp profile: no profile for architecture %q (agentbox supports amd64 and arm64)", goarch)
	}
	return a, nil
}

// GOARCH is the inverse of ArchForGOARCH; it returns "" for other arches.
func GOARCH(arch specs.Arch) string {
	for g, a := range goArches {
		if a == arch {
			return g
		}
	}
	return ""
}

// NativeArch returns the seccomp architecture of the running binary.
func NativeArch() (specs.Arch, error) { return ArchForGOARCH(runtime.GOARCH) }

// OCI renders p for arch as the runtime-spec seccomp section: only the
// native architecture, only the rules that apply to it, the names of each
// rule sorted. Denials are not rendered (the default action covers them).
func (p Profile) OCI(arch specs.Arch) *specs.LinuxSeccomp {
	out := &specs.LinuxSeccomp{
		DefaultAction: p.DefaultAction,
		Architectures: []specs.Arch{arch},
	}
	if p.DefaultErrnoRet != 0 {
		out.DefaultErrnoRet = uintPtr(p.DefaultErrnoRet)
	}
	for _, r := range p.Rules {
		if r.AppliesTo(arch) {
			out.Syscalls = append(out.Syscalls, r.oci())
		}
	}
	return out
}

// NativeOCI is OCI for the architecture of the running binary.
func (p Profile) NativeOCI() (*specs.LinuxSeccomp, error) {
	arch, err := NativeArch()
	if err != nil {
		return nil, err
	}
	return p.OCI(arch), nil
}

// AppliesTo reports whether r is part of the filter for arch.
func (r Rule) AppliesTo(arch specs.Arch) bool {
	return len(r.Arches) == 0 || slices.Contains(r.Arches, arch)
}

func (r Rule) oci() specs.LinuxSyscall {
	s := specs.LinuxSyscall{
		Names:  slices.Sorted(slices.Values(r.Names)),
		Action: r.Action,
		Args:   slices.Clone(r.Args),
	}
	if r.ErrnoRet != 0 {
		s.ErrnoRet = uintPtr(r.ErrnoRet)
	}
	return s
}

// DeniedSyscalls returns, sorted, every dangerous syscall that agentbox's
// default profile refuses whatever the arguments. Syscalls it refuses only
// for some arguments (clone, socket, personality) are in DeniedCalls.
func DeniedSyscalls() []string {
	var names []string
	for _, d := range denials() { // Default's, without the rest of the profile built
		names = append(names, d.Names...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// DeniedCalls returns the argument-specific calls agentbox's default profile
// refuses although it allows the syscall itself.
func DeniedCalls() []Call {
	return deniedCalls() // Default's, a fresh copy
}

func uintPtr(v uint) *uint { return &v }

// Named returns the profile called name. Default ("agentbox") is the only
// one: the planner names it in the Plan, and the renderers install it.
func Named(name string) (Profile, bool) {
	if p := Default(); p.Name == name {
		return p, true
	}
	return Profile{}, false
}
