package seccomp

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

const retErrnoEPERM = retErrno | 1

// oneCondition is a profile allowing getpid when c holds, EPERM otherwise.
func oneCondition(c specs.LinuxSeccompArg) *specs.LinuxSeccomp {
	return &specs.LinuxSeccomp{
		DefaultAction: specs.ActErrno, Architectures: []specs.Arch{specs.ArchX86_64},
		Syscalls: []specs.LinuxSyscall{{Names: []string{"getpid"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{c}}},
	}
}

// TestCompileComparesBothWords: each operator on values whose high and low
// words pull in opposite directions, where comparing one word alone, or the
// words as signed, gives the wrong answer.
func TestCompileComparesBothWords(t *testing.T) {
	const hi1 = 1 << 32
	for _, tc := range []struct {
		op        specs.LinuxSeccompOperator
		value     uint64
		valueTwo  uint64
		arg       uint64
		wantAllow bool
	}{
		{specs.OpEqualTo, hi1 | 5, 0, hi1 | 5, true},
		{specs.OpEqualTo, hi1 | 5, 0, 5, false},
		{specs.OpEqualTo, 5, 0, hi1 | 5, false},
		{specs.OpNotEqual, hi1 | 5, 0, 5, true},
		{specs.OpNotEqual, hi1 | 5, 0, 2*hi1 | 5, true},
		{specs.OpNotEqual, hi1 | 5, 0, hi1 | 5, false},
		{specs.OpGreaterThan, hi1, 0, 0xffffffff, false},
		{specs.OpGreaterThan, hi1, 0, hi1, false},
		{specs.OpGreaterThan, hi1, 0, hi1 | 1, true},
		{specs.OpGreaterThan, hi1 | 5, 0, 2 * hi1, true}, // high word larger, low word smaller
		{specs.OpGreaterThan, 0x7fffffff, 0, 0x80000000, true},
		{specs.OpGreaterEqual, hi1 | 5, 0, hi1 | 5, true},
		{specs.OpGreaterEqual, hi1 | 5, 0, hi1 | 4, false},
		{specs.OpGreaterEqual, hi1 | 5, 0, 0xffffffff, false},
		{specs.OpGreaterEqual, hi1 | 5, 0, 1 << 63, true},
		{specs.OpLessThan, hi1, 0, 0xffffffff, true},
		{specs.OpLessThan, hi1, 0, hi1, false},
		{specs.OpLessThan, 2 * hi1, 0, hi1 | 0xffffffff, true},
		{specs.OpLessThan, 0, 0, 0, false},
		{specs.OpLessEqual, hi1 | 5, 0, 0xffffffff, true}, // libseccomp 2.5.4 gets this wrong when ORed with another LT
		{specs.OpLessEqual, hi1 | 5, 0, hi1 | 5, true},
		{specs.OpLessEqual, hi1 | 5, 0, hi1 | 6, false},
		{specs.OpLessEqual, hi1 | 5, 0, 2 * hi1, false},
		{specs.OpLessEqual, ^uint64(0), 0, ^uint64(0), true},
		{specs.OpMaskedEqual, 0x0f, 0x05, 0xf5, true},
		{specs.OpMaskedEqual, 0x0f, 0x05, hi1 | 0x05, true}, // high word outside the mask
		{specs.OpMaskedEqual, 0x0f, 0x05, 0x06, false},
		{specs.OpMaskedEqual, 0x0f, 0x15, 0x05, true},               // datum bits outside the mask are masked, as libseccomp does
		{specs.OpMaskedEqual, hi1 | 0xff, hi1, 0x100, false},        // a mask with bits in both words
		{specs.OpMaskedEqual, hi1 | 0xff, hi1, 3*hi1 | 0x100, true}, // ... tests both
		{specs.OpMaskedEqual, 0xffffffff00000000, 0, 0xffffffff, true},
		{specs.OpMaskedEqual, 0xffffffff00000000, 0, hi1, false},
		{specs.OpMaskedEqual, 0, 7, 12345, true}, // an empty mask: always
	} {
		p := oneCondition(specs.LinuxSeccompArg{Index: 2, Op: tc.op, Value: tc.value, ValueTwo: tc.valueTwo})
		prog, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runBPF(prog.BPF, int32(syscallNumbers["SCMP_ARCH_X86_64"]["getpid"]), auditArchX86_64, [6]uint64{2: tc.arg})
		if err != nil {
			t.Fatal(err)
		}
		want := uint32(retErrnoEPERM)
		if tc.wantAllow {
			want = retAllowAll
		}
		if got != want {
			t.Errorf("arg %#x %s %#x (valueTwo %#x): filter returns %#x, want %#x", tc.arg, tc.op, tc.value, tc.valueTwo, got, want)
		}
	}
}

func instructions(prog []byte) []struct {
	code   uint16
	jt, jf uint8
	k      uint32
} {
	var out []struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	for i := 0; i < len(prog); i += sockFilterSize {
		out = append(out, struct {
			code   uint16
			jt, jf uint8
			k      uint32
		}{binary.NativeEndian.Uint16(prog[i:]), prog[i+2], prog[i+3], binary.NativeEndian.Uint32(prog[i+4:])})
	}
	return out
}

// TestAssembleFarJumps: a conditional jump with one or both targets past
// the 255 instructions its offsets reach goes through unconditional jumps.
func TestAssembleFarJumps(t *testing.T) {
	for _, tc := range []struct {
		name        string
		filler      int
		farT, farF  bool
		trampolines int
	}{
		{"near", 100, true, true, 0},
		{"true branch 255 ahead", 252, true, false, 0},
		{"true branch 256 ahead", 253, true, false, 1},
		{"both far", 300, true, true, 2},
		{"false branch far", 1000, false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a asm
			yes, no, other := a.newLabel(), a.newLabel(), a.newLabel()
			a.load(offNr)
			jt, jf := next, other
			if tc.farT {
				jt = yes
			}
			if tc.farF {
				jf = no
			}
			a.jmp(bpfJEQ, 5, jt, jf)
			// the near true branch lands here
			a.jump(yes)
			a.place(other)
			a.jump(no)
			for range tc.filler {
				a.load(offArch) // straight-line filler
			}
			a.ret(retKillProcess)
			a.place(yes)
			a.ret(retAllowAll)
			a.place(no)
			a.ret(retErrnoEPERM)
			prog, err := a.assemble()
			if err != nil {
				t.Fatal(err)
			}
			for nr, want := range map[int32]uint32{5: retAllowAll, 6: retErrnoEPERM} {
				if got, err := runBPF(prog, nr, 0, [6]uint64{}); err != nil || got != want {
					t.Errorf("nr %d: %#x, %v; want %#x", nr, got, err, want)
				}
			}
			ins := instructions(prog)
			if got := len(ins) - (tc.filler + 7); got != tc.trampolines {
				t.Errorf("%d trampolines, want %d", got, tc.trampolines)
			}
		})
	}
}

// manyArgRules gives every x86_64 syscall of the table an argument rule:
// the dispatch then jumps hundreds of instructions to each syscall's tests.
func manyArgRules(conds int) *specs.LinuxSeccomp {
	p := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Architectures: []specs.Arch{specs.ArchX86_64}}
	for i, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range syscallNumbers["SCMP_ARCH_X86_64"] {
			if !yield(n) {
				return
			}
		}
	}) {
		var args []specs.LinuxSeccompArg
		for c := range conds {
			args = append(args, specs.LinuxSeccompArg{Index: uint(c), Op: specs.OpEqualTo, Value: uint64(i) << (8 * c)})
		}
		p.Syscalls = append(p.Syscalls, specs.LinuxSyscall{Names: []string{name}, Action: specs.ActAllow, Args: args})
	}
	return p
}

func TestCompileFarJumpsInAProfile(t *testing.T) {
	p := manyArgRules(1)
	prog, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Instructions < 1000 {
		t.Fatalf("%d instructions: not long enough to need far jumps", prog.Instructions)
	}
	decide := decider(p)
	r := rand.New(rand.NewPCG(7, 8))
	for _, d := range inputs(p, 100, r) {
		got, err := evalBPF(prog.BPF, d)
		if err != nil {
			t.Fatal(err)
		}
		if want := decide(d); got != want {
			t.Fatalf("nr %d arch %#x args %#x: %#x, want %#x", d.nr, d.arch, d.args, got, want)
		}
	}
	t.Logf("%d instructions", prog.Instructions)
}

func TestCompileRefusesOverTheKernelLimit(t *testing.T) {
	_, err := Compile(manyArgRules(3))
	if err == nil || !strings.Contains(err.Error(), "over the kernel's limit of 4096") {
		t.Errorf("Compile = %v, want the 4096-instruction error", err)
	}
}

func TestCompileErrorsWithoutLibseccomp(t *testing.T) {
	for name, tc := range map[string]struct {
		p    *specs.LinuxSeccomp
		want string
	}{
		"nil":          {nil, "no profile"},
		"bad default":  {&specs.LinuxSeccomp{DefaultAction: "SCMP_ACT_NOPE"}, `unknown action "SCMP_ACT_NOPE"`},
		"foreign arch": {&specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Architectures: []specs.Arch{specs.ArchX86}}, "not covered"},
		"bad arch":     {&specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Architectures: []specs.Arch{"SCMP_ARCH_Z80"}}, "not covered"},
		"bad rule":     {&specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{Names: []string{"read"}, Action: "X"}}}, `syscalls[0]: action: unknown action "X"`},
		"bad errno":    {&specs.LinuxSeccomp{DefaultAction: specs.ActErrno, DefaultErrnoRet: new(uint(5000))}, "errnoRet 5000"},
		"bad index": {&specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{{Index: 6, Op: specs.OpEqualTo}}},
		}}, "index 6"},
		"bad op": {&specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read"}, Action: specs.ActAllow, Args: []specs.LinuxSeccompArg{{Op: "SCMP_CMP_ALMOST"}}},
		}}, "unknown operator"},
		"two actions": {&specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{
			{Names: []string{"read"}, Action: specs.ActAllow},
			{Names: []string{"read"}, Action: specs.ActLog, Args: []specs.LinuxSeccompArg{{Op: specs.OpEqualTo}}},
		}}, "read has rules with actions SCMP_ACT_ALLOW and SCMP_ACT_LOG"},
	} {
		_, err := Compile(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Compile = %v, want an error with %q", name, err, tc.want)
		}
	}
}

// TestCompileSkipsUnknownNames: a name outside the table is skipped and
// reported; one the table knows on another architecture only adds nothing.
func TestCompileSkipsUnknownNames(t *testing.T) {
	p := &specs.LinuxSeccomp{
		DefaultAction: specs.ActErrno, Architectures: []specs.Arch{specs.ArchAARCH64},
		Syscalls: []specs.LinuxSyscall{{Names: []string{"raed", "open", "read", "socketcall"}, Action: specs.ActAllow}},
	}
	prog, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(prog.Skipped, []string{"raed"}) {
		t.Errorf("skipped %v, want [raed]", prog.Skipped)
	}
	read := int32(syscallNumbers["SCMP_ARCH_AARCH64"]["read"])
	open := int32(syscallNumbers["SCMP_ARCH_X86_64"]["open"]) // 2 is io_setup on arm64
	for nr, want := range map[int32]uint32{read: retAllowAll, open: retErrnoEPERM} {
		if got, _ := runBPF(prog.BPF, nr, auditArchAARCH64, [6]uint64{}); got != want {
			t.Errorf("nr %d: %#x, want %#x", nr, got, want)
		}
	}
}

// TestCompileShippedProfilesWithoutLibseccomp holds the program of each
// shipped profile to the profile itself (decider), in any build.
func TestCompileShippedProfilesWithoutLibseccomp(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, arch := range profiles.Arches() {
		for _, p := range []*specs.LinuxSeccomp{profiles.Default().OCI(arch), profiles.Default().LoggedOCI(arch, "/l")} {
			if !checkProfile(t, p, 20000, r) {
				t.Fatalf("%s: refused", arch)
			}
		}
	}
}
