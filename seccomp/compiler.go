package seccomp

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

//go:generate go run ./internal/syscallgen

// SECCOMP_RET_* (linux/seccomp.h): what a filter answers.
const (
	retKillProcess = 0x80000000
	retKillThread  = 0x00000000
	retTrap        = 0x00030000
	retErrno       = 0x00050000
	retUserNotif   = 0x7fc00000
	retTrace       = 0x7ff00000
	retLog         = 0x7ffc0000
	retAllowAll    = 0x7fff0000
)

// The AUDIT_ARCH_* values (linux/audit.h) of the architectures the
// compiler covers, and the x32 ABI's flag in the syscall number.
const (
	auditArchX86_64  = 0xc000003e
	auditArchAARCH64 = 0xc00000b7
	x32SyscallBit    = 0x40000000
)

// The layout of struct seccomp_data: nr, arch, instruction_pointer, args[6].
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// auditArches are the architectures Compile covers: both 64-bit and
// little-endian, so that an argument's low word is at offset 16+8i and its
// high word 4 bytes later.
var auditArches = map[specs.Arch]uint32{
	specs.ArchX86_64:  auditArchX86_64,
	specs.ArchAARCH64: auditArchAARCH64,
}

// ErrArchNotCovered marks an architecture Compile has no syscall table or
// ABI rules for (x86, x32, and the rest but x86_64 and aarch64).
var ErrArchNotCovered = errors.New("architecture not covered by agentbox's seccomp compiler (it covers SCMP_ARCH_X86_64 and SCMP_ARCH_AARCH64)")

// Compile builds p into a classic BPF program, in pure Go, with the
// decisions libseccomp 2.5 gives the same profile the way runc adds it:
//
//   - the architecture is checked first: a call from an architecture the
//     profile does not list meets SECCOMP_RET_KILL_THREAD (libseccomp's
//     bad-architecture action); on x86_64 so does a call with
//     __X32_SYSCALL_BIT set, except syscall -1, which gets the default
//     action, as in libseccomp;
//   - rules whose action equals the default are dropped, names outside
//     the syscall table (generated from libseccomp, see zsyscalls.go) are
//     skipped and listed in Program.Skipped, and a name with no number on
//     an architecture adds nothing there;
//   - the conditions of a rule are ANDed and the rules of one syscall ORed;
//     conditions on the same argument become separate rules, as in runc;
//   - each 64-bit argument is compared as two 32-bit words; SCMP_CMP_MASKED_EQ
//     takes value as the mask and valueTwo as the datum, and compares
//     arg&mask with valueTwo&mask, as libseccomp does (a mask word of zero
//     drops that word's test).
//
// It covers SCMP_ARCH_X86_64 and SCMP_ARCH_AARCH64 (ErrArchNotCovered for
// the others), and refuses a profile that gives one syscall rules with two
// different actions (libseccomp resolves those by the order of the rules).
// Libseccomp stays the reference: the package's tests compare the decisions
// of both programs over every syscall number and the boundary values of
// every comparison.
func Compile(p *specs.LinuxSeccomp) (Program, error) {
	prog, err := compile(p)
	if err != nil {
		return Program{}, fmt.Errorf("compile seccomp profile: %w", err)
	}
	return prog, nil
}

// rule is one ORed alternative of a syscall: ANDed conditions.
type rule []specs.LinuxSeccompArg

// syscallRules are the rules of one syscall on one architecture.
type syscallRules struct {
	nr     uint32
	action uint32
	what   specs.LinuxSeccompAction // for the error about mixed actions
	rules  []rule                   // empty rule: always
}

func compile(p *specs.LinuxSeccomp) (Program, error) {
	if p == nil {
		return Program{}, errors.New("no profile")
	}
	def, err := retAction(p.DefaultAction, p.DefaultErrnoRet)
	if err != nil {
		return Program{}, fmt.Errorf("defaultAction: %w", err)
	}
	arches, err := compileArches(p.Architectures)
	if err != nil {
		return Program{}, err
	}
	perArch := map[specs.Arch]map[uint32]*syscallRules{}
	for _, a := range arches {
		perArch[a] = map[uint32]*syscallRules{}
	}
	var skipped []string
	for i, r := range p.Syscalls {
		s, err := addSyscallRule(perArch, def, r)
		if err != nil {
			return Program{}, fmt.Errorf("syscalls[%d]: %w", i, err)
		}
		skipped = append(skipped, s...)
	}
	var a asm
	gen(&a, def, arches, perArch)
	bpf, err := a.assemble()
	if err != nil {
		return Program{}, err
	}
	return Program{BPF: bpf, Instructions: len(bpf) / sockFilterSize, Skipped: skipped}, nil
}

// compileArches reads the profile's architectures in the spellings
// libseccomp-golang accepts; none means the native one.
func compileArches(names []specs.Arch) ([]specs.Arch, error) {
	if len(names) == 0 {
		native, err := profiles.NativeArch()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrArchNotCovered, err)
		}
		names = []specs.Arch{native}
	}
	var out []specs.Arch
	for _, n := range names {
		a, ok := archAliases[strings.TrimPrefix(strings.ToLower(string(n)), "scmp_arch_")]
		if !ok {
			return nil, fmt.Errorf("architecture %q: %w", n, ErrArchNotCovered)
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

var archAliases = map[string]specs.Arch{
	"amd64": specs.ArchX86_64, "x86-64": specs.ArchX86_64, "x86_64": specs.ArchX86_64, "x64": specs.ArchX86_64,
	"arm64": specs.ArchAARCH64, "aarch64": specs.ArchAARCH64,
}

func addSyscallRule(perArch map[specs.Arch]map[uint32]*syscallRules, def uint32, r specs.LinuxSyscall) ([]string, error) {
	act, err := retAction(r.Action, r.ErrnoRet)
	if err != nil {
		return nil, fmt.Errorf("action: %w", err)
	}
	if act == def {
		return nil, nil // runc drops these too
	}
	alts, err := alternatives(r.Args)
	if err != nil {
		return nil, err
	}
	var skipped []string
	for _, name := range r.Names {
		if _, known := slices.BinarySearch(knownNames, name); !known {
			skipped = append(skipped, name)
			continue
		}
		for arch, calls := range perArch {
			nr, ok := syscallNumbers[string(arch)][name]
			if !ok {
				continue // no such syscall on arch: libseccomp adds nothing either
			}
			s := calls[nr]
			if s == nil {
				s = &syscallRules{nr: nr, action: act, what: r.Action}
				calls[nr] = s
			}
			if s.action != act {
				return nil, fmt.Errorf("%s has rules with actions %s and %s; agentbox's compiler gives a syscall one action besides the default (libseccomp would pick by rule order)", name, describe(s.what, s.action), describe(r.Action, act))
			}
			s.rules = append(s.rules, alts...)
		}
	}
	return skipped, nil
}

func describe(a specs.LinuxSeccompAction, ret uint32) string {
	if a == specs.ActErrno || a == specs.ActTrace {
		return fmt.Sprintf("%s(%d)", a, ret&0xffff)
	}
	return string(a)
}

// alternatives groups a rule's conditions as runc does: all together, or
// one rule per condition when two of them test the same argument.
func alternatives(args []specs.LinuxSeccompArg) ([]rule, error) {
	for j, a := range args {
		if a.Index > 5 {
			return nil, fmt.Errorf("args[%d]: index %d: a syscall has arguments 0 to 5", j, a.Index)
		}
		if !slices.Contains(knownOps, a.Op) {
			return nil, fmt.Errorf("args[%d]: unknown operator %q", j, a.Op)
		}
	}
	if !sharesIndex(args) {
		return []rule{slices.Clone(args)}, nil
	}
	out := make([]rule, len(args))
	for j, a := range args {
		out[j] = rule{a}
	}
	return out, nil
}

// retAction is the SECCOMP_RET_* value of an action, with libseccomp-golang's
// mapping: SCMP_ACT_KILL is KILL_THREAD, ERRNO and TRACE default to EPERM.
func retAction(a specs.LinuxSeccompAction, errnoRet *uint) (uint32, error) {
	if errnoRet != nil && (*errnoRet == 0 || *errnoRet > 4095) {
		return 0, fmt.Errorf("errnoRet %d is not an errno (1 to 4095)", *errnoRet)
	}
	data := uint32(errnoEPERM)
	if errnoRet != nil {
		data = uint32(*errnoRet)
	}
	switch a {
	case specs.ActAllow:
		return retAllowAll, nil
	case specs.ActLog:
		return retLog, nil
	case specs.ActErrno:
		return retErrno | data, nil
	case specs.ActTrace:
		return retTrace | data, nil
	case specs.ActKill, specs.ActKillThread:
		return retKillThread, nil
	case specs.ActKillProcess:
		return retKillProcess, nil
	case specs.ActTrap:
		return retTrap, nil
	case specs.ActNotify:
		return retUserNotif, nil
	}
	return 0, fmt.Errorf("unknown action %q", a)
}
