package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestConstantsMatchUAPI checks the compiler's copies of the kernel's
// constants (written out so that the package builds on every OS) against
// golang.org/x/sys/unix, which is generated from the UAPI headers.
func TestConstantsMatchUAPI(t *testing.T) {
	for name, c := range map[string][2]uint64{
		"BPF_LD|BPF_W|BPF_ABS":       {bpfLdWAbs, unix.BPF_LD | unix.BPF_W | unix.BPF_ABS},
		"BPF_ALU|BPF_AND|BPF_K":      {bpfAndK, unix.BPF_ALU | unix.BPF_AND | unix.BPF_K},
		"BPF_JMP|BPF_JA":             {bpfJA, unix.BPF_JMP | unix.BPF_JA},
		"BPF_JMP|BPF_JEQ|BPF_K":      {bpfJEQ, unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K},
		"BPF_JMP|BPF_JGT|BPF_K":      {bpfJGT, unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K},
		"BPF_JMP|BPF_JGE|BPF_K":      {bpfJGE, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K},
		"BPF_RET|BPF_K":              {bpfRetK, unix.BPF_RET | unix.BPF_K},
		"BPF_MAXINSNS":               {maxInstructions, unix.BPF_MAXINSNS},
		"SECCOMP_RET_KILL_PROCESS":   {retKillProcess, unix.SECCOMP_RET_KILL_PROCESS},
		"SECCOMP_RET_KILL_THREAD":    {retKillThread, unix.SECCOMP_RET_KILL_THREAD},
		"SECCOMP_RET_TRAP":           {retTrap, unix.SECCOMP_RET_TRAP},
		"SECCOMP_RET_ERRNO":          {retErrno, unix.SECCOMP_RET_ERRNO},
		"SECCOMP_RET_USER_NOTIF":     {retUserNotif, unix.SECCOMP_RET_USER_NOTIF},
		"SECCOMP_RET_TRACE":          {retTrace, unix.SECCOMP_RET_TRACE},
		"SECCOMP_RET_LOG":            {retLog, unix.SECCOMP_RET_LOG},
		"SECCOMP_RET_ALLOW":          {retAllowAll, unix.SECCOMP_RET_ALLOW},
		"AUDIT_ARCH_X86_64":          {auditArchX86_64, unix.AUDIT_ARCH_X86_64},
		"AUDIT_ARCH_AARCH64":         {auditArchAARCH64, unix.AUDIT_ARCH_AARCH64},
		"sizeof(struct sock_filter)": {sockFilterSize, uint64(unix.SizeofSockFilter)},
	} {
		if c[0] != c[1] {
			t.Errorf("%s: %#x here, %#x in the UAPI", name, c[0], c[1])
		}
	}
}
