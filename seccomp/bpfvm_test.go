package seccomp

import (
	"encoding/binary"
	"fmt"
)

// seccompData is struct seccomp_data, the input of a filter.
type seccompData struct {
	nr   int32
	arch uint32
	ip   uint64
	args [6]uint64
}

// evalBPF interprets a classic BPF seccomp program on d the way the kernel
// does, for the opcodes libseccomp and Compile emit, and checks what the
// kernel's checker would refuse: a jump past the end, a load outside
// seccomp_data or unaligned, an unknown opcode, falling off the end. It
// lets the tests judge a program for a foreign architecture and for ABIs
// this host cannot enter safely (x32, int 0x80, AArch32). Both covered
// architectures are little-endian.
func evalBPF(prog []byte, d seccompData) (uint32, error) {
	var data [64]byte
	binary.LittleEndian.PutUint32(data[0:], uint32(d.nr))
	binary.LittleEndian.PutUint32(data[4:], d.arch)
	binary.LittleEndian.PutUint64(data[8:], d.ip)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	if len(prog)%sockFilterSize != 0 || len(prog) == 0 || len(prog)/sockFilterSize > maxInstructions {
		return 0, fmt.Errorf("program of %d bytes", len(prog))
	}
	n := len(prog) / sockFilterSize
	var acc uint32
	for pc := 0; pc < n; pc++ {
		ins := prog[pc*sockFilterSize:]
		code, jt, jf, k := binary.NativeEndian.Uint16(ins), int(ins[2]), int(ins[3]), binary.NativeEndian.Uint32(ins[4:])
		jump := func(cond bool) error {
			off := jf
			if cond {
				off = jt
			}
			if pc+1+max(jt, jf) >= n {
				return fmt.Errorf("pc %d: jump past the end", pc)
			}
			pc += off
			return nil
		}
		var err error
		switch code {
		case bpfLdWAbs:
			if k%4 != 0 || k+4 > 64 {
				return 0, fmt.Errorf("pc %d: load at offset %d", pc, k)
			}
			acc = binary.LittleEndian.Uint32(data[k:])
		case bpfAndK:
			acc &= k
		case bpfJA:
			if pc+1+int(k) >= n || int(k) < 0 {
				return 0, fmt.Errorf("pc %d: ja past the end", pc)
			}
			pc += int(k)
		case bpfJEQ:
			err = jump(acc == k)
		case bpfJGT:
			err = jump(acc > k)
		case bpfJGE:
			err = jump(acc >= k)
		case 0x05 | 0x40: // BPF_JMP | BPF_JSET | BPF_K
			err = jump(acc&k != 0)
		case bpfRetK:
			return k, nil
		case 0x06 | 0x10: // BPF_RET | BPF_A
			return acc, nil
		default:
			return 0, fmt.Errorf("pc %d: opcode %#x not interpreted", pc, code)
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("program ran off its end")
}

// runBPF is evalBPF on a call: number, audit arch, arguments.
func runBPF(prog []byte, nr int32, arch uint32, args [6]uint64) (uint32, error) {
	return evalBPF(prog, seccompData{nr: nr, arch: arch, args: args})
}
