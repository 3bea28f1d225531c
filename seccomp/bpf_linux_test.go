//go:build cgo && linux

package seccomp

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | 1
	retENOSYS = unix.SECCOMP_RET_ERRNO | 38
	retKill   = unix.SECCOMP_RET_KILL_THREAD
)

// TestCompiledFilterDecisions runs the compiled program of each
// architecture on calls this host could not make safely, or at all.
func TestCompiledFilterDecisions(t *testing.T) {
	for _, tc := range []struct {
		arch     specs.Arch
		scmp     libseccomp.ScmpArch
		native   uint32
		compat   uint32 // the 32-bit ABI of the same CPU
		compatNr int32  // getpid there (20 on both i386 and arm)
	}{
		{specs.ArchX86_64, libseccomp.ArchAMD64, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_I386, 20},
		{specs.ArchAARCH64, libseccomp.ArchARM64, unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM, 20},
	} {
		t.Run(string(tc.arch), func(t *testing.T) {
			prog, err := Compile(profiles.Default().OCI(tc.arch))
			if err != nil {
				t.Fatal(err)
			}
			nr := func(name string) int32 {
				n, err := libseccomp.GetSyscallFromNameByArch(name, tc.scmp)
				if err != nil || n < 0 {
					t.Fatalf("%s on %s: %d, %v", name, tc.arch, n, err)
				}
				return int32(n)
			}
			cases := []struct {
				name string
				nr   int32
				arch uint32
				args [6]uint64
				want uint32
			}{
				{"getpid", nr("getpid"), tc.native, [6]uint64{}, retAllow},
				{"mount", nr("mount"), tc.native, [6]uint64{}, retEPERM},
				{"keyctl", nr("keyctl"), tc.native, [6]uint64{}, retEPERM},
				{"io_uring_setup", nr("io_uring_setup"), tc.native, [6]uint64{}, retEPERM},
				{"clone3", nr("clone3"), tc.native, [6]uint64{}, retENOSYS},
				{"clone(fork)", nr("clone"), tc.native, [6]uint64{0x01200011}, retAllow},
				{"clone(CLONE_NEWUSER)", nr("clone"), tc.native, [6]uint64{unix.CLONE_NEWUSER | 17}, retEPERM},
				{"clone(CLONE_NEWNET|high bits)", nr("clone"), tc.native, [6]uint64{1<<40 | unix.CLONE_NEWNET}, retEPERM},
				{"socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC)", nr("socket"), tc.native, [6]uint64{unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, retAllow},
				{"socket(AF_INET, SOCK_STREAM|garbage in bits 32-63)", nr("socket"), tc.native, [6]uint64{unix.AF_INET, 1<<33 | unix.SOCK_STREAM}, retAllow},
				{"socket(AF_PACKET)", nr("socket"), tc.native, [6]uint64{unix.AF_PACKET, unix.SOCK_DGRAM}, retEPERM},
				{"socket(1<<32|AF_PACKET)", nr("socket"), tc.native, [6]uint64{1<<32 | unix.AF_PACKET, unix.SOCK_DGRAM}, retEPERM},
				{"socket(AF_INET, SOCK_RAW)", nr("socket"), tc.native, [6]uint64{unix.AF_INET, unix.SOCK_RAW}, retEPERM},
				{"socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)", nr("socket"), tc.native, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW | unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE}, retAllow},
				{"socket(AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT)", nr("socket"), tc.native, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_KOBJECT_UEVENT}, retEPERM},
				{"socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG)", nr("socket"), tc.native, [6]uint64{unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_SOCK_DIAG}, retEPERM},
				{"socket(AF_NETLINK, SOCK_RAW, 1<<32|NETLINK_ROUTE)", nr("socket"), tc.native, [6]uint64{unix.AF_NETLINK, unix.SOCK_RAW, 1 << 32}, retEPERM},
				{"personality(0xffffffff)", nr("personality"), tc.native, [6]uint64{0xffffffff}, retAllow},
				{"personality(READ_IMPLIES_EXEC)", nr("personality"), tc.native, [6]uint64{readImpliesExec}, retEPERM},
				{"syscall number far above the table", 999, tc.native, [6]uint64{}, retEPERM},
				{"32-bit ABI getpid", tc.compatNr, tc.compat, [6]uint64{}, retKill},
			}
			if tc.arch == specs.ArchX86_64 {
				cases = append(cases, struct {
					name string
					nr   int32
					arch uint32
					args [6]uint64
					want uint32
				}{"x32 getpid", x32SyscallBit | nr("getpid"), tc.native, [6]uint64{}, retKill})
			}
			for _, c := range cases {
				got, err := runBPF(prog.BPF, c.nr, c.arch, c.args)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if got != c.want {
					t.Errorf("%s: filter returns %#x, want %#x", c.name, got, c.want)
				}
			}
		})
	}
}
