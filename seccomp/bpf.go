package seccomp

import (
	"encoding/binary"
	"fmt"
)

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h): the few a
// seccomp filter of this package is made of. constants_linux_test.go checks
// them against golang.org/x/sys/unix.
const (
	bpfLdWAbs = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfAndK   = 0x54 // BPF_ALU | BPF_AND | BPF_K
	bpfJA     = 0x05 // BPF_JMP | BPF_JA
	bpfJEQ    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJGT    = 0x25 // BPF_JMP | BPF_JGT | BPF_K
	bpfJGE    = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfRetK   = 0x06 // BPF_RET | BPF_K
)

// maxInstructions is BPF_MAXINSNS: the kernel refuses a longer filter.
const maxInstructions = 4096

// maxCondJump is the farthest a conditional jump reaches: its offsets are
// one byte. Farther targets go through an unconditional jump (32-bit).
const maxCondJump = 255

// label names a place in a program; the assembler resolves it to an
// instruction. The zero label is "the next instruction".
type label int

const next label = 0

// insn is one instruction before assembly: jumps name labels, not offsets.
type insn struct {
	code   uint16
	k      uint32
	jt, jf label // conditional jumps
	ja     label // BPF_JA
	// mark, when not zero, is the label of this instruction.
	mark label
}

// asm builds a program whose jumps are labels, then lays it out with
// unconditional jumps wherever a conditional one would reach too far.
type asm struct {
	code   []insn
	labels int
}

func (a *asm) newLabel() label { a.labels++; return label(a.labels) }

// place makes l the label of the next instruction emitted.
func (a *asm) place(l label) {
	a.code = append(a.code, insn{mark: l, code: 0xffff}) // a marker, not an instruction
}

func (a *asm) emit(i insn) { a.code = append(a.code, i) }

func (a *asm) load(off uint32) { a.emit(insn{code: bpfLdWAbs, k: off}) }
func (a *asm) and(k uint32)    { a.emit(insn{code: bpfAndK, k: k}) }
func (a *asm) ret(k uint32)    { a.emit(insn{code: bpfRetK, k: k}) }
func (a *asm) jump(l label)    { a.emit(insn{code: bpfJA, ja: l}) }

func (a *asm) jmp(code uint16, k uint32, jt, jf label) {
	a.emit(insn{code: code, k: k, jt: jt, jf: jf})
}

// slot is one instruction of the laid-out program.
type slot struct {
	insn
	// far[0] and far[1] are set when the true or false branch goes through
	// an unconditional jump placed right after this instruction.
	far [2]bool
}

// assemble resolves the labels and encodes the program (struct sock_filter,
// native byte order). A conditional jump whose target lies more than 255
// instructions ahead is given a trampoline: an unconditional jump right
// after it, which it reaches with offset 0 or 1. Adding trampolines moves
// other targets, so layout repeats until no jump is out of reach; each
// branch gets at most one trampoline, so it ends.
func (a *asm) assemble() ([]byte, error) {
	var prog []slot
	marks := map[label]int{} // label -> index in prog of the instruction it marks
	pending := []label{}
	for _, i := range a.code {
		if i.code == 0xffff {
			pending = append(pending, i.mark)
			continue
		}
		for _, l := range pending {
			marks[l] = len(prog)
		}
		pending = pending[:0]
		prog = append(prog, slot{insn: i})
	}
	if len(pending) > 0 {
		return nil, fmt.Errorf("assemble seccomp filter: label at the end of the program")
	}
	for {
		pos, err := layout(prog, marks)
		if err != nil {
			return nil, err
		}
		changed := false
		for n := range prog {
			s := &prog[n]
			if !isCond(s.code) {
				continue
			}
			for b, l := range [2]label{s.jt, s.jf} {
				if l == next || s.far[b] {
					continue
				}
				if pos[marks[l]]-(pos[n]+1) > maxCondJump {
					s.far[b] = true
					changed = true
				}
			}
		}
		if !changed {
			return encode(prog, marks, pos)
		}
	}
}

func isCond(code uint16) bool { return code == bpfJEQ || code == bpfJGT || code == bpfJGE }

// layout returns the position of each slot's instruction, counting the
// trampolines placed after it.
func layout(prog []slot, marks map[label]int) ([]int, error) {
	pos := make([]int, len(prog)+1)
	p := 0
	for n, s := range prog {
		pos[n] = p
		p++
		for _, f := range s.far {
			if f {
				p++
			}
		}
	}
	pos[len(prog)] = p
	for n, s := range prog {
		for _, l := range [3]label{s.jt, s.jf, s.ja} {
			if l == next {
				continue
			}
			t, ok := marks[l]
			if !ok {
				return nil, fmt.Errorf("assemble seccomp filter: jump to a label never placed")
			}
			if t <= n {
				return nil, fmt.Errorf("assemble seccomp filter: backward jump")
			}
		}
	}
	return pos, nil
}

func encode(prog []slot, marks map[label]int, pos []int) ([]byte, error) {
	n := pos[len(prog)]
	if n > maxInstructions {
		return nil, fmt.Errorf("compile seccomp profile: %d BPF instructions, over the kernel's limit of %d (BPF_MAXINSNS); split the profile's argument rules or name fewer syscalls", n, maxInstructions)
	}
	out := make([]byte, 0, n*sockFilterSize)
	put := func(code uint16, jt, jf uint8, k uint32) {
		out = binary.NativeEndian.AppendUint16(out, code)
		out = append(out, jt, jf)
		out = binary.NativeEndian.AppendUint32(out, k)
	}
	for i, s := range prog {
		here := pos[i] + 1 // jumps count from the next instruction
		target := func(l label) int {
			if l == next { // the next slot, after any trampolines
				return pos[i+1]
			}
			return pos[marks[l]]
		}
		switch {
		case s.code == bpfJA:
			put(bpfJA, 0, 0, uint32(target(s.ja)-here))
		case isCond(s.code):
			var off [2]uint8
			tramp := 0
			for b, l := range [2]label{s.jt, s.jf} {
				if s.far[b] {
					off[b] = uint8(tramp)
					tramp++
					continue
				}
				off[b] = uint8(target(l) - here) // layout kept it within 255
			}
			put(s.code, off[0], off[1], s.k)
			for b, l := range [2]label{s.jt, s.jf} {
				if s.far[b] {
					at := len(out)/sockFilterSize + 1
					put(bpfJA, 0, 0, uint32(target(l)-at))
				}
			}
		default:
			put(s.code, 0, 0, s.k)
		}
	}
	return out, nil
}
