package seccomp

import (
	"cmp"
	"maps"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// retChunk is how many syscall tests share one group of return
// instructions, so that each test reaches its return with a short jump.
const retChunk = 128

// gen writes the program: the architecture check, then one block per
// architecture. Every path ends in a return; jumps only go forward.
func gen(a *asm, def uint32, arches []specs.Arch, perArch map[specs.Arch]map[uint32]*syscallRules) {
	a.load(offArch)
	blocks := make([]label, len(arches))
	for i, arch := range arches {
		blocks[i] = a.newLabel()
		a.jmp(bpfJEQ, auditArches[arch], blocks[i], next)
	}
	a.ret(retKillThread) // libseccomp's default bad-architecture action
	for i, arch := range arches {
		a.place(blocks[i])
		genArch(a, def, arch, perArch[arch])
	}
}

// genArch is one architecture's block: the ABI check, a test of the number
// of every syscall with rules, the default action, then the argument
// tests of the syscalls whose rules have conditions.
func genArch(a *asm, def uint32, arch specs.Arch, calls map[uint32]*syscallRules) {
	a.load(offNr)
	if arch == specs.ArchX86_64 {
		// x32 calls enter with the x86_64 audit arch and this bit set;
		// libseccomp sends them to the bad-architecture action, except -1
		// (a tracer skipping the call), which meets the syscall tests.
		dispatch, bad := a.newLabel(), a.newLabel()
		a.jmp(bpfJGE, x32SyscallBit, next, dispatch)
		a.jmp(bpfJEQ, 0xffffffff, dispatch, bad)
		a.place(bad)
		a.ret(retKillThread)
		a.place(dispatch)
	}
	var always, withArgs []*syscallRules
	for _, nr := range slices.Sorted(maps.Keys(calls)) {
		s := calls[nr]
		if slices.ContainsFunc(s.rules, func(r rule) bool { return len(r) == 0 }) {
			always = append(always, s)
		} else {
			withArgs = append(withArgs, s)
		}
	}
	for chunk := range slices.Chunk(always, retChunk) {
		genAlways(a, chunk)
	}
	bodies := make([]label, len(withArgs))
	for i, s := range withArgs {
		bodies[i] = a.newLabel()
		a.jmp(bpfJEQ, s.nr, bodies[i], next)
	}
	a.ret(def)
	for i, s := range withArgs {
		a.place(bodies[i])
		for _, r := range s.rules {
			genRule(a, r, s.action)
		}
		a.ret(def)
	}
}

// genAlways tests the numbers of syscalls whose action does not depend on
// the arguments; each jumps to a return of its action placed after the
// chunk, and a miss skips those returns.
func genAlways(a *asm, chunk []*syscallRules) {
	rets := map[uint32]label{}
	for _, s := range chunk {
		if _, ok := rets[s.action]; !ok {
			rets[s.action] = a.newLabel()
		}
		a.jmp(bpfJEQ, s.nr, rets[s.action], next)
	}
	after := a.newLabel()
	a.jump(after)
	for _, act := range slices.SortedFunc(maps.Keys(rets), cmp.Compare) {
		a.place(rets[act])
		a.ret(act)
	}
	a.place(after)
}

// genRule returns action when every condition holds, and otherwise goes
// on to what follows it (the next rule, or the default).
func genRule(a *asm, r rule, action uint32) {
	miss := a.newLabel()
	for _, c := range r {
		genCond(a, c, miss)
	}
	a.ret(action)
	a.place(miss)
}

// genCond falls through when the 64-bit argument satisfies c and jumps to
// miss when it does not, comparing the high word first. The diagrams in
// libseccomp's src/db.c (_db_rule_gen_64) show the same decisions.
func genCond(a *asm, c specs.LinuxSeccompArg, miss label) {
	lo, hi := uint32(offArgs+8*c.Index), uint32(offArgs+8*c.Index+4)
	vlo, vhi := uint32(c.Value), uint32(c.Value>>32)
	hit := a.newLabel()
	switch c.Op {
	case specs.OpEqualTo:
		a.load(hi)
		a.jmp(bpfJEQ, vhi, next, miss)
		a.load(lo)
		a.jmp(bpfJEQ, vlo, next, miss)
	case specs.OpNotEqual:
		a.load(hi)
		a.jmp(bpfJEQ, vhi, next, hit)
		a.load(lo)
		a.jmp(bpfJEQ, vlo, miss, next)
	case specs.OpGreaterThan, specs.OpGreaterEqual:
		a.load(hi)
		a.jmp(bpfJGT, vhi, hit, next)
		a.jmp(bpfJEQ, vhi, next, miss)
		a.load(lo)
		a.jmp(pick(c.Op == specs.OpGreaterThan, bpfJGT, bpfJGE), vlo, next, miss)
	case specs.OpLessThan, specs.OpLessEqual:
		// a < v is !(a >= v), a <= v is !(a > v)
		a.load(hi)
		a.jmp(bpfJGT, vhi, miss, next)
		a.jmp(bpfJEQ, vhi, next, hit)
		a.load(lo)
		a.jmp(pick(c.Op == specs.OpLessThan, bpfJGE, bpfJGT), vlo, miss, next)
	case specs.OpMaskedEqual:
		datum := c.ValueTwo & c.Value
		for _, w := range []struct{ off, mask, datum uint32 }{
			{hi, vhi, uint32(datum >> 32)}, {lo, vlo, uint32(datum)},
		} {
			if w.mask == 0 {
				continue // arg&0 == 0: libseccomp drops the test too
			}
			a.load(w.off)
			if w.mask != 0xffffffff {
				a.and(w.mask)
			}
			a.jmp(bpfJEQ, w.datum, next, miss)
		}
	default:
		// alternatives accepts only the operators above
		panic("seccomp: unchecked operator " + string(c.Op))
	}
	a.place(hit)
}

func pick(cond bool, yes, no uint16) uint16 {
	if cond {
		return yes
	}
	return no
}
