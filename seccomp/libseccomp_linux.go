//go:build cgo && linux

package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// Validate checks p against the linked libseccomp: every architecture is
// known, every syscall name resolves to a real syscall on every listed
// architecture (the native one when none is listed), every action and
// argument condition is one libseccomp accepts, and no rule tests the same
// argument twice (runc would OR those conditions). It returns nil or a
// *ValidationError listing every problem.
func Validate(p *specs.LinuxSeccomp) error {
	if p == nil {
		return errors.New("validate seccomp profile: no profile")
	}
	var ve ValidationError
	arches, err := scmpArches(p.Architectures)
	if err != nil {
		ve.add(-1, "", "architectures", err)
	}
	if _, err := scmpAction(p.DefaultAction, p.DefaultErrnoRet); err != nil {
		ve.add(-1, "", "defaultAction", err)
	}
	for i, r := range p.Syscalls {
		validateRule(&ve, i, r, arches)
	}
	if len(ve.Problems) > 0 {
		return &ve
	}
	return nil
}

func validateRule(ve *ValidationError, i int, r specs.LinuxSyscall, arches []libseccomp.ScmpArch) {
	if _, err := scmpAction(r.Action, r.ErrnoRet); err != nil {
		ve.add(i, "", "action", err)
	}
	if len(r.Names) == 0 {
		ve.add(i, "", "names", errors.New("no syscall names"))
	}
	for _, name := range r.Names {
		for _, a := range arches {
			nr, err := libseccomp.GetSyscallFromNameByArch(name, a)
			switch {
			case err != nil:
				ve.add(i, name, "names", fmt.Errorf("%w by libseccomp %s", ErrUnknownSyscall, libraryVersion()))
			case nr < 0:
				ve.add(i, name, "names", fmt.Errorf("%w on %s", ErrNotOnArch, a))
			}
		}
	}
	if sharesIndex(r.Args) {
		ve.add(i, "", "args", errors.New("two conditions test the same argument; runc turns them into separate rules that are ORed"))
	}
	for j, a := range r.Args {
		if _, err := scmpCondition(a); err != nil {
			ve.add(i, "", fmt.Sprintf("args[%d]", j), err)
		}
	}
}

// CompileLibseccomp builds p into a BPF program with libseccomp the way
// runc 1.1 does: rules whose action equals the default are dropped, names
// the linked libseccomp does not know are skipped (and listed in
// Program.Skipped), and conditions on the same argument become separate
// rules. Unlike runc it compiles for exactly the listed architectures, so
// that a profile for another architecture can be compiled and measured on
// this host. It is the reference Compile is tested against, and covers the
// architectures Compile does not (x86, x32, ...).
func CompileLibseccomp(p *specs.LinuxSeccomp) (Program, error) {
	f, skipped, err := build(p)
	if err != nil {
		return Program{}, err
	}
	defer f.Release()
	bpf, err := exportBPF(f)
	if err != nil {
		return Program{}, fmt.Errorf("compile seccomp profile: export BPF: %w", err)
	}
	return Program{BPF: bpf, Instructions: len(bpf) / sockFilterSize, Skipped: skipped}, nil
}

// exportBPF writes the program through a memfd: ExportBPFMem needs
// libseccomp 2.6, and Debian 12 ships 2.5.4.
func exportBPF(f *libseccomp.ScmpFilter) ([]byte, error) {
	fd, err := unix.MemfdCreate("agentbox-seccomp-bpf", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	file := os.NewFile(uintptr(fd), "agentbox-seccomp-bpf")
	defer file.Close()
	if err := f.ExportBPF(file); err != nil {
		return nil, err
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(file)
}

// build turns p into a libseccomp filter; the caller releases it.
func build(p *specs.LinuxSeccomp) (*libseccomp.ScmpFilter, []string, error) {
	if p == nil {
		return nil, nil, errors.New("compile seccomp profile: no profile")
	}
	def, err := scmpAction(p.DefaultAction, p.DefaultErrnoRet)
	if err != nil {
		return nil, nil, fmt.Errorf("compile seccomp profile: defaultAction: %w", err)
	}
	f, err := libseccomp.NewFilter(def)
	if err != nil {
		return nil, nil, fmt.Errorf("compile seccomp profile: %w", err)
	}
	if err := setArches(f, p.Architectures); err != nil {
		f.Release()
		return nil, nil, fmt.Errorf("compile seccomp profile: %w", err)
	}
	var skipped []string
	for i, r := range p.Syscalls {
		s, err := addRule(f, def, r)
		if err != nil {
			f.Release()
			return nil, nil, fmt.Errorf("compile seccomp profile: syscalls[%d]: %w", i, err)
		}
		skipped = append(skipped, s...)
	}
	return f, skipped, nil
}

// setArches makes the filter cover exactly arches (the native one if empty).
func setArches(f *libseccomp.ScmpFilter, names []specs.Arch) error {
	if len(names) == 0 {
		return nil
	}
	arches, err := scmpArches(names)
	if err != nil {
		return err
	}
	for _, a := range arches {
		if err := f.AddArch(a); err != nil {
			return fmt.Errorf("add architecture %s: %w", a, err)
		}
	}
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		return fmt.Errorf("native architecture: %w", err)
	}
	if !slices.Contains(arches, native) {
		if err := f.RemoveArch(native); err != nil {
			return fmt.Errorf("remove native architecture %s: %w", native, err)
		}
	}
	return nil
}

func addRule(f *libseccomp.ScmpFilter, def libseccomp.ScmpAction, r specs.LinuxSyscall) ([]string, error) {
	act, err := scmpAction(r.Action, r.ErrnoRet)
	if err != nil {
		return nil, err
	}
	if act == def {
		return nil, nil // runc drops these too; libseccomp refuses them
	}
	conds, err := conditions(r.Args)
	if err != nil {
		return nil, err
	}
	var skipped []string
	for _, name := range r.Names {
		nr, err := libseccomp.GetSyscallFromName(name)
		if err != nil {
			skipped = append(skipped, name)
			continue
		}
		for _, c := range conds {
			if err := f.AddRuleConditional(nr, act, c); err != nil {
				return nil, fmt.Errorf("add rule for %s: %w", name, err)
			}
		}
	}
	return skipped, nil
}

// conditions groups the rule's conditions as runc does: all together, or
// one rule per condition when two of them test the same argument.
func conditions(args []specs.LinuxSeccompArg) ([][]libseccomp.ScmpCondition, error) {
	var all []libseccomp.ScmpCondition
	for j, a := range args {
		c, err := scmpCondition(a)
		if err != nil {
			return nil, fmt.Errorf("args[%d]: %w", j, err)
		}
		all = append(all, c)
	}
	if !sharesIndex(args) {
		return [][]libseccomp.ScmpCondition{all}, nil
	}
	var out [][]libseccomp.ScmpCondition
	for _, c := range all {
		out = append(out, []libseccomp.ScmpCondition{c})
	}
	return out, nil
}

func scmpArches(names []specs.Arch) ([]libseccomp.ScmpArch, error) {
	if len(names) == 0 {
		native, err := libseccomp.GetNativeArch()
		if err != nil {
			return nil, fmt.Errorf("native architecture: %w", err)
		}
		return []libseccomp.ScmpArch{native}, nil
	}
	var out []libseccomp.ScmpArch
	for _, n := range names {
		a, err := libseccomp.GetArchFromString(strings.TrimPrefix(strings.ToLower(string(n)), "scmp_arch_"))
		if err != nil {
			return nil, fmt.Errorf("architecture %q: %w", n, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func scmpAction(a specs.LinuxSeccompAction, errnoRet *uint) (libseccomp.ScmpAction, error) {
	ret := func(def uint) int16 {
		if errnoRet != nil {
			return int16(*errnoRet)
		}
		return int16(def)
	}
	if errnoRet != nil && (*errnoRet == 0 || *errnoRet > 4095) {
		return libseccomp.ActInvalid, fmt.Errorf("errnoRet %d is not an errno (1 to 4095)", *errnoRet)
	}
	switch a {
	case specs.ActAllow:
		return libseccomp.ActAllow, nil
	case specs.ActLog:
		return libseccomp.ActLog, nil
	case specs.ActErrno:
		return libseccomp.ActErrno.SetReturnCode(ret(errnoEPERM)), nil
	case specs.ActTrace:
		return libseccomp.ActTrace.SetReturnCode(ret(errnoEPERM)), nil
	case specs.ActKill, specs.ActKillThread:
		return libseccomp.ActKillThread, nil
	case specs.ActKillProcess:
		return libseccomp.ActKillProcess, nil
	case specs.ActTrap:
		return libseccomp.ActTrap, nil
	case specs.ActNotify:
		return libseccomp.ActNotify, nil
	}
	return libseccomp.ActInvalid, fmt.Errorf("unknown action %q", a)
}

var scmpOps = map[specs.LinuxSeccompOperator]libseccomp.ScmpCompareOp{
	specs.OpNotEqual:     libseccomp.CompareNotEqual,
	specs.OpLessThan:     libseccomp.CompareLess,
	specs.OpLessEqual:    libseccomp.CompareLessOrEqual,
	specs.OpEqualTo:      libseccomp.CompareEqual,
	specs.OpGreaterEqual: libseccomp.CompareGreaterEqual,
	specs.OpGreaterThan:  libseccomp.CompareGreater,
	specs.OpMaskedEqual:  libseccomp.CompareMaskedEqual,
}

// scmpCondition converts a condition; for SCMP_CMP_MASKED_EQ, value is the
// mask and valueTwo the datum, as in runc and libseccomp's C API.
func scmpCondition(a specs.LinuxSeccompArg) (libseccomp.ScmpCondition, error) {
	op, ok := scmpOps[a.Op]
	if !ok {
		return libseccomp.ScmpCondition{}, fmt.Errorf("unknown operator %q", a.Op)
	}
	return libseccomp.MakeCondition(a.Index, op, a.Value, a.ValueTwo)
}

func libraryVersion() string {
	major, minor, micro := libseccomp.GetLibraryVersion()
	return fmt.Sprintf("%d.%d.%d", major, minor, micro)
}

// LibseccompVersion returns the version of the linked libseccomp.
func LibseccompVersion() (profiles.Version, error) {
	major, minor, micro := libseccomp.GetLibraryVersion()
	return profiles.Version{Major: int(major), Minor: int(minor), Patch: int(micro)}, nil
}

func (e *ValidationError) add(rule int, name, field string, err error) {
	e.Problems = append(e.Problems, Problem{Rule: rule, Name: name, Field: field, Err: err})
}
