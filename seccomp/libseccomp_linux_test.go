//go:build cgo && linux

package seccomp

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

// tooNew returns the names of rules that need a newer upstream libseccomp
// than the linked one: the only names allowed not to resolve. (Distributions
// backport syscall tables, so some of them may resolve all the same.)
func tooNew(t *testing.T, arch specs.Arch) []string {
	t.Helper()
	have, err := LibseccompVersion()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range profiles.Default().Rules {
		if r.AppliesTo(arch) && have.Less(r.MinLibseccomp) {
			names = append(names, r.Names...)
		}
	}
	slices.Sort(names)
	return names
}

func TestValidateAgentboxProfile(t *testing.T) {
	for _, arch := range profiles.Arches() {
		t.Run(string(arch), func(t *testing.T) {
			var unknown []string
			err := Validate(profiles.Default().OCI(arch))
			var ve *ValidationError
			if err != nil && !errors.As(err, &ve) {
				t.Fatal(err)
			}
			if ve != nil {
				for _, p := range ve.Problems {
					if !errors.Is(p.Err, ErrUnknownSyscall) {
						t.Errorf("problem: %s", p)
					}
					unknown = append(unknown, p.Name)
				}
			}
			for _, name := range unknown {
				if !slices.Contains(tooNew(t, arch), name) {
					t.Errorf("%q does not resolve, yet its rule claims the linked libseccomp knows it", name)
				}
			}
			t.Logf("names the linked libseccomp cannot resolve: %v", unknown)
		})
	}
}

func TestValidateFindsProblems(t *testing.T) {
	errno := uint(1)
	p := &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &errno,
		Architectures:   []specs.Arch{specs.ArchAARCH64},
		Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read", "open", "raed"}, Action: specs.ActAllow},
			{Names: []string{"socket"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{
				{Index: 0, Value: 17, Op: specs.OpNotEqual}, {Index: 0, Value: 10, Op: specs.OpNotEqual},
			}},
			{Names: []string{"write"}, Action: "SCMP_ACT_MAYBE"},
			{Names: []string{"close"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{{Index: 0, Op: "SCMP_CMP_ALMOST"}}},
		},
	}
	err := Validate(p)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v, want a *ValidationError", err)
	}
	var got []string
	for _, pr := range ve.Problems {
		got = append(got, pr.String())
	}
	want := []string{
		`syscalls[0].names "open": no such syscall on arm64`,
		`syscalls[0].names "raed": syscall name not known by libseccomp ` + libraryVersion(),
		`syscalls[1].args: two conditions test the same argument; runc turns them into separate rules that are ORed`,
		`syscalls[2].action: unknown action "SCMP_ACT_MAYBE"`,
		`syscalls[3].args[0]: unknown operator "SCMP_CMP_ALMOST"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if !errors.Is(err, ErrNotOnArch) || !errors.Is(err, ErrUnknownSyscall) {
		t.Errorf("errors.Is does not see the name problems in %v", err)
	}
}

func TestCompileAgentboxProfile(t *testing.T) {
	for _, arch := range profiles.Arches() {
		t.Run(string(arch), func(t *testing.T) {
			prog, err := Compile(profiles.Default().OCI(arch))
			if err != nil {
				t.Fatal(err)
			}
			// The kernel refuses filters over BPF_MAXINSNS (4096).
			if prog.Instructions < 100 || prog.Instructions > 4096 {
				t.Errorf("%d BPF instructions, want between 100 and 4096", prog.Instructions)
			}
			if len(prog.BPF) != 8*prog.Instructions {
				t.Errorf("%d bytes for %d instructions", len(prog.BPF), prog.Instructions)
			}
			for _, name := range prog.Skipped {
				if !slices.Contains(tooNew(t, arch), name) {
					t.Errorf("%q was skipped, yet its rule claims the linked libseccomp knows it", name)
				}
			}
			t.Logf("%s: %d instructions", arch, prog.Instructions)
		})
	}
}

// TestCompileNativeOnlyIsSmaller shows what naming one architecture buys:
// the same rules for x86_64 plus its i386 and x32 ABIs compile to a much
// larger program, which runc builds on every container start.
func TestCompileNativeOnlyIsSmaller(t *testing.T) {
	native := profiles.Default().OCI(specs.ArchX86_64)
	three := profiles.Default().OCI(specs.ArchX86_64)
	three.Architectures = []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32}
	a, err := CompileLibseccomp(native)
	if err != nil {
		t.Fatal(err)
	}
	b, err := CompileLibseccomp(three)
	if err != nil {
		t.Fatal(err)
	}
	if a.Instructions >= b.Instructions {
		t.Errorf("x86_64 only: %d instructions, with x86 and x32: %d", a.Instructions, b.Instructions)
	}
	t.Logf("x86_64 only: %d instructions; x86_64+x86+x32: %d", a.Instructions, b.Instructions)
}

func TestCompileErrors(t *testing.T) {
	for name, p := range map[string]*specs.LinuxSeccomp{
		"nil":                nil,
		"bad default":        {DefaultAction: "SCMP_ACT_NOPE"},
		"bad arch":           {DefaultAction: specs.ActErrno, Architectures: []specs.Arch{"SCMP_ARCH_Z80"}},
		"bad rule":           {DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{Names: []string{"read"}, Action: "X"}}},
		"errno out of range": {DefaultAction: specs.ActErrno, DefaultErrnoRet: new(uint(5000))},
	} {
		if _, err := Compile(p); err == nil {
			t.Errorf("%s: Compile succeeded", name)
		}
		if _, err := CompileLibseccomp(p); err == nil {
			t.Errorf("%s: CompileLibseccomp succeeded", name)
		}
	}
}

// BenchmarkCompile measures what a runtime pays on every container start to
// turn the profile into BPF with libseccomp: for each native architecture,
// and for x86_64 with the i386 and x32 ABIs added as Docker's default
// profile does; and, as purego-ARCH, what agentbox's own compiler (Compile)
// pays for the same native profile.
func BenchmarkCompile(b *testing.B) {
	three := profiles.Default().OCI(specs.ArchX86_64)
	three.Architectures = []specs.Arch{specs.ArchX86_64, specs.ArchX86, specs.ArchX32}
	type bench struct {
		name    string
		p       *specs.LinuxSeccomp
		compile func(*specs.LinuxSeccomp) (Program, error)
	}
	cases := []bench{{"SCMP_ARCH_X86_64+X86+X32", three, CompileLibseccomp}}
	for _, arch := range profiles.Arches() {
		cases = append(cases, bench{string(arch), profiles.Default().OCI(arch), CompileLibseccomp},
			bench{"purego-" + string(arch), profiles.Default().OCI(arch), Compile})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.compile(c.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestValidateLoggedProfile: the notify rule of the logged form names only
// syscalls the linked libseccomp resolves, on both architectures.
func TestValidateLoggedProfile(t *testing.T) {
	for _, arch := range profiles.Arches() {
		if err := Validate(profiles.Default().LoggedOCI(arch, "/run/denials.sock")); err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatal(err)
			}
			for _, p := range ve.Problems {
				if p.Rule == len(profiles.Default().OCI(arch).Syscalls) {
					t.Errorf("%s: the notify rule: %s", arch, p)
				}
			}
		}
	}
}
