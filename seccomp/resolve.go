package seccomp

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

var knownActions = []specs.LinuxSeccompAction{
	specs.ActKill, specs.ActKillProcess, specs.ActKillThread, specs.ActTrap, specs.ActErrno,
	specs.ActTrace, specs.ActAllow, specs.ActLog, specs.ActNotify,
}

var knownOps = []specs.LinuxSeccompOperator{
	specs.OpNotEqual, specs.OpLessThan, specs.OpLessEqual, specs.OpEqualTo,
	specs.OpGreaterEqual, specs.OpGreaterThan, specs.OpMaskedEqual,
}

// check rejects what no runtime would accept, naming the field.
func (f *dockerProfile) check() *FileError {
	if f.DefaultAction == "" {
		return &FileError{Field: "defaultAction", Err: errors.New("missing (use SCMP_ACT_ERRNO for an allowlist)")}
	}
	if err := checkAction(f.DefaultAction, f.DefaultErrnoRet); err != nil {
		return &FileError{Field: "defaultAction", Err: err}
	}
	if len(f.Architectures) > 0 && len(f.ArchMap) > 0 {
		return &FileError{Field: "archMap", Err: errors.New("both architectures and archMap are set; use one")}
	}
	for i, s := range f.Syscalls {
		if err := s.check(); err != nil {
			err.Field = fmt.Sprintf("syscalls[%d]%s", i, err.Field)
			return err
		}
	}
	return nil
}

func (s *dockerSyscall) check() *FileError {
	switch {
	case s.Name != "" && len(s.Names) > 0:
		return &FileError{Field: ".name", Err: errors.New("both name and names are set; use names")}
	case s.Name == "" && len(s.Names) == 0:
		return &FileError{Field: ".names", Err: errors.New("missing: a rule must name at least one syscall")}
	case slices.Contains(s.Names, ""):
		return &FileError{Field: ".names", Err: errors.New("empty syscall name")}
	}
	if err := checkAction(s.Action, s.ErrnoRet); err != nil {
		return &FileError{Field: ".action", Err: err}
	}
	for j, a := range s.Args {
		if err := checkArg(a); err != nil {
			return &FileError{Field: fmt.Sprintf(".args[%d]", j), Err: err}
		}
	}
	for _, f := range []*dockerFilter{s.Includes, s.Excludes} {
		if f == nil || f.MinKernel == "" {
			continue
		}
		if _, err := parseKernel(f.MinKernel); err != nil {
			return &FileError{Field: ".includes/excludes.minKernel", Err: err}
		}
	}
	return nil
}

func checkAction(a specs.LinuxSeccompAction, errnoRet *uint) error {
	if !slices.Contains(knownActions, a) {
		return fmt.Errorf("unknown action %q (known: %v)", a, knownActions)
	}
	if errnoRet != nil && a != specs.ActErrno && a != specs.ActTrace {
		return fmt.Errorf("errnoRet is set but action %s takes no errno", a)
	}
	return nil
}

func checkArg(a specs.LinuxSeccompArg) error {
	if a.Index > 5 {
		return fmt.Errorf("index %d: a syscall has arguments 0 to 5", a.Index)
	}
	if !slices.Contains(knownOps, a.Op) {
		return fmt.Errorf("unknown operator %q (known: %v)", a.Op, knownOps)
	}
	return nil
}

// parseKernel reads Docker's "<kernel>.<major>" minimum kernel.
func parseKernel(s string) (profiles.Version, error) {
	major, minor, ok := strings.Cut(s, ".")
	a, errA := strconv.Atoi(major)
	b, errB := strconv.Atoi(minor)
	if !ok || errA != nil || errB != nil || a < 0 || b < 0 {
		return profiles.Version{}, fmt.Errorf("kernel version %q: want <kernel>.<major>, e.g. \"4.8\"", s)
	}
	return profiles.Version{Major: a, Minor: b}, nil
}

// resolve applies Docker's includes/excludes for t, as moby's profile
// loader does, and returns the runtime-spec form.
func (f *dockerProfile) resolve(name string, t Target) (*specs.LinuxSeccomp, error) {
	if t.Arch == "" {
		arch, err := profiles.NativeArch()
		if err != nil {
			return nil, &FileError{Path: name, Err: err}
		}
		t.Arch = arch
	}
	out := &specs.LinuxSeccomp{
		DefaultAction: f.DefaultAction, DefaultErrnoRet: f.DefaultErrnoRet,
		Architectures: slices.Clone(f.Architectures), Flags: f.Flags,
		ListenerPath: f.ListenerPath, ListenerMetadata: f.ListenerMetadata,
	}
	for _, m := range f.ArchMap {
		if m.Arch == t.Arch {
			out.Architectures = append([]specs.Arch{m.Arch}, m.SubArches...)
		}
	}
	for _, s := range f.Syscalls {
		if !t.wants(s) {
			continue
		}
		names := s.Names
		if s.Name != "" {
			names = []string{s.Name}
		}
		out.Syscalls = append(out.Syscalls, specs.LinuxSyscall{
			Names: names, Action: s.Action, ErrnoRet: s.ErrnoRet, Args: s.Args,
		})
	}
	return out, nil
}

// wants reports whether a Docker rule applies to the target container.
func (t Target) wants(s dockerSyscall) bool {
	arch := profiles.GOARCH(t.Arch) // Docker writes arches as amd64, arm64, ...
	if e := s.Excludes; e != nil {
		if slices.Contains(e.Arches, arch) || slices.ContainsFunc(e.Caps, t.hasCap) || t.atLeast(e.MinKernel) {
			return false
		}
	}
	if in := s.Includes; in != nil {
		if len(in.Arches) > 0 && !slices.Contains(in.Arches, arch) {
			return false
		}
		for _, c := range in.Caps {
			if !t.hasCap(c) {
				return false
			}
		}
		if in.MinKernel != "" && !t.atLeast(in.MinKernel) {
			return false
		}
	}
	return true
}

func (t Target) hasCap(c string) bool { return slices.Contains(t.Caps, c) }

// atLeast reports whether the target kernel is at least v; an unset kernel
// counts as new enough. v was checked when the file was parsed.
func (t Target) atLeast(v string) bool {
	if v == "" {
		return false
	}
	want, _ := parseKernel(v)
	return t.Kernel.IsZero() || !t.Kernel.Less(want)
}
