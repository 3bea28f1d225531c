package profiles

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

var update = flag.Bool("update", false, "rewrite the generated profile files")

// required is the list of issue 2: every one of these must be refused.
var required = []string{
	"mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
	"pivot_root", "ptrace", "process_vm_readv", "process_vm_writev", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module", "keyctl", "add_key",
	"request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "unshare", "setns", "clone3", "open_by_handle_at", "name_to_handle_at",
	// Docker allows these only with a capability.
	"acct", "chroot", "clock_settime", "settimeofday", "reboot", "swapon", "swapoff",
	"quotactl", "sethostname", "setdomainname", "syslog", "lookup_dcookie", "kcmp",
	"pidfd_getfd", "process_madvise", "iopl", "ioperm", "vhangup", "mbind", "set_mempolicy",
	"get_mempolicy", "mount_setattr", "fanotify_init",
}

func TestDeniedSyscallsCoverTheRequiredList(t *testing.T) {
	denied := DeniedSyscalls()
	for _, name := range required {
		if !slices.Contains(denied, name) {
			t.Errorf("DeniedSyscalls() lacks %q", name)
		}
	}
	if !slices.IsSorted(denied) || len(slices.Compact(slices.Clone(denied))) != len(denied) {
		t.Errorf("DeniedSyscalls() is not sorted and unique: %v", denied)
	}
}

func TestNoRuleAllowsADeniedSyscall(t *testing.T) {
	denied := DeniedSyscalls()
	for i, r := range Default().Rules {
		for _, n := range r.Names {
			if slices.Contains(denied, n) && r.Action != specs.ActErrno {
				t.Errorf("rule %d (%s) lets denied syscall %q through with %s", i, r.Reason, n, r.Action)
			}
		}
	}
}

func TestEveryRuleIsComplete(t *testing.T) {
	for i, r := range Default().Rules {
		if len(strings.Fields(r.Reason)) < 3 {
			t.Errorf("rule %d %v: reason %q is not a reason", i, r.Names, r.Reason)
		}
		if r.MinKernel.IsZero() {
			t.Errorf("rule %d %v: no minimum kernel", i, r.Names)
		}
		if len(r.Names) == 0 {
			t.Errorf("rule %d: no syscall names", i)
		}
		if r.Action != specs.ActAllow && r.Action != specs.ActErrno {
			t.Errorf("rule %d %v: unexpected action %s", i, r.Names, r.Action)
		}
		if (r.Action == specs.ActErrno) != (r.ErrnoRet != 0) {
			t.Errorf("rule %d %v: errnoRet %d does not fit action %s", i, r.Names, r.ErrnoRet, r.Action)
		}
		seen := map[uint]bool{}
		for _, a := range r.Args {
			if seen[a.Index] {
				t.Errorf("rule %d %v: two conditions on argument %d (runc would OR them)", i, r.Names, a.Index)
			}
			seen[a.Index] = true
		}
	}
}

// TestNoDuplicateNames: a syscall appears in one unconditional rule at most,
// and never both unconditionally and under an argument filter.
func TestNoDuplicateNames(t *testing.T) {
	for _, arch := range Arches() {
		unconditional := map[string]int{}
		conditional := map[string]bool{}
		for i, r := range Default().Rules {
			if !r.AppliesTo(arch) {
				continue
			}
			for _, n := range r.Names {
				if len(r.Args) > 0 {
					conditional[n] = true
					continue
				}
				if j, dup := unconditional[n]; dup {
					t.Errorf("%s: %q in rules %d and %d", arch, n, j, i)
				}
				unconditional[n] = i
			}
		}
		for n := range conditional {
			if _, both := unconditional[n]; both {
				t.Errorf("%s: %q is allowed unconditionally, which voids its argument filter", arch, n)
			}
		}
	}
}

func TestCloneFlagFilter(t *testing.T) {
	const (
		sigchld          = 17
		cloneVM          = 0x100
		cloneFS          = 0x200
		cloneFiles       = 0x400
		cloneSighand     = 0x800
		clonePidfd       = 0x1000
		cloneVfork       = 0x4000
		cloneThread      = 0x10000
		cloneSysvsem     = 0x40000
		cloneSettls      = 0x80000
		cloneParentTID   = 0x100000
		cloneChildClear  = 0x200000
		cloneChildSettid = 0x1000000
	)
	tests := []struct {
		name  string
		flags uint64
		allow bool
	}{
		{"glibc fork", cloneChildSettid | cloneChildClear | sigchld, true},
		{"posix_spawn", cloneVM | cloneVfork | sigchld, true},
		{"go os/exec", cloneVM | cloneVfork | clonePidfd | sigchld, true},
		{"pthread_create", cloneVM | cloneFS | cloneFiles | cloneSighand | cloneThread | cloneSysvsem |
			cloneSettls | cloneParentTID | cloneChildClear, true},
		{"CLONE_NEWUSER", cloneNewUser | sigchld, false},
		{"CLONE_NEWNS", cloneNewNS, false},
		{"CLONE_NEWUTS", cloneNewUTS, false},
		{"CLONE_NEWIPC", cloneNewIPC, false},
		{"CLONE_NEWPID", cloneNewPID, false},
		{"CLONE_NEWNET", cloneNewNet, false},
		{"CLONE_NEWCGROUP", cloneNewCgroup, false},
		{"fork with CLONE_NEWUSER", cloneChildSettid | cloneChildClear | sigchld | cloneNewUser, false},
		{"high bits set with CLONE_NEWNET", 0xffffffff00000000 | cloneNewNet, false},
	}
	var rules []Rule
	for _, r := range Default().Rules {
		if slices.Contains(r.Names, "clone") {
			rules = append(rules, r)
		}
	}
	if len(rules) != 1 || len(rules[0].Args) != 1 {
		t.Fatalf("want exactly one clone rule with one condition, got %+v", rules)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matches(rules[0].Args[0], tt.flags); got != tt.allow {
				t.Errorf("clone(%#x): allowed=%v, want %v", tt.flags, got, tt.allow)
			}
		})
	}
}

func TestSocketFilter(t *testing.T) {
	const sockNonblock, sockCloexec = 0o4000, 0o2000000
	const netlinkNetfilter, netlinkGeneric, netlinkXfrm = 12, 16, 6
	tests := []struct {
		domain, typ, proto uint64
		allow              bool
	}{
		{afInet, sockStream, 0, true},
		{afInet, sockStream | sockNonblock | sockCloexec, 6 /* IPPROTO_TCP */, true},
		{afInet6, sockDgram, 0, true},
		{afUnix, sockSeqpacket, 0, true},
		{afUnix, sockDgram | sockCloexec, 0, true},
		{afNetlink, sockRaw | sockCloexec, netlinkRoute, true},
		{afNetlink, sockDgram, netlinkRoute, true},
		{afNetlink, sockRaw | sockCloexec, netlinkKobjectUevent, false},
		{afNetlink, sockDgram, netlinkSockDiag, false},
		{afNetlink, sockRaw, netlinkAudit, false},
		{afNetlink, sockRaw, netlinkNetfilter, false},
		{afNetlink, sockRaw, netlinkGeneric, false},
		{afNetlink, sockDgram, netlinkXfrm, false},
		{afNetlink, sockRaw, 0x1_0000_0000 | netlinkAudit, false},
		{afNetlink, sockStream, netlinkRoute, false},
		{afPacket, sockRaw, 0, false},
		{afPacket, sockDgram, 0, false},
		{afInet, sockRaw, 0, false},
		{afInet6, sockRaw, 0, false},
		{afInet, sockPacket, 0, false},
		{40 /* AF_VSOCK */, sockStream, 0, false},
		{38 /* AF_ALG */, sockSeqpacket, 0, false},
		{0x1_0000_0000 | afPacket, sockDgram, 0, false},
	}
	for _, tt := range tests {
		got := allowedBy(Default().Rules, "socket", tt.domain, tt.typ, tt.proto)
		if got != tt.allow {
			t.Errorf("socket(%d, %#x, %#x): allowed=%v, want %v", tt.domain, tt.typ, tt.proto, got, tt.allow)
		}
	}
}

// TestNetlinkRulesCarryTheirReason: each netlink rule names the one
// protocol it allows, says why the others are refused, and needs no kernel
// newer than the socket rules.
func TestNetlinkRulesCarryTheirReason(t *testing.T) {
	var n int
	for _, r := range Default().Rules {
		if !slices.Contains(r.Names, "socket") || len(r.Args) == 0 || r.Args[0].Value != afNetlink {
			continue
		}
		n++
		if !slices.ContainsFunc(r.Args, func(a specs.LinuxSeccompArg) bool {
			return a.Index == 2 && a.Op == specs.OpEqualTo && a.Value == netlinkRoute
		}) {
			t.Errorf("netlink rule %v does not pin the protocol to NETLINK_ROUTE", r.Args)
		}
		for _, word := range []string{"NETLINK_ROUTE", "NETLINK_KOBJECT_UEVENT", "NETLINK_AUDIT", "NETLINK_SOCK_DIAG"} {
			if !strings.Contains(r.Reason, word) {
				t.Errorf("netlink rule's reason does not mention %s: %q", word, r.Reason)
			}
		}
		if r.MinKernel != v2_6 {
			t.Errorf("netlink rule needs Linux %s, want %s", r.MinKernel, v2_6)
		}
	}
	if n != 2 {
		t.Errorf("%d netlink socket rules, want 2 (SOCK_RAW and SOCK_DGRAM)", n)
	}
}

func TestPersonalityFilter(t *testing.T) {
	for _, tt := range []struct {
		persona uint64
		allow   bool
	}{
		{perQuery, true},
		{perLinux, true},
		{perLinux32, true},
		{perUname26 | perLinux32, true},
		{readImpliesExec, false},
		{personalityOfBSD, false},
		{0x0040000 /* ADDR_NO_RANDOMIZE */, false},
	} {
		if got := allowedBy(Default().Rules, "personality", tt.persona); got != tt.allow {
			t.Errorf("personality(%#x): allowed=%v, want %v", tt.persona, got, tt.allow)
		}
	}
}

func TestDeniedCallsAreRefused(t *testing.T) {
	for _, c := range DeniedCalls() {
		args := make([]uint64, 6)
		for _, a := range c.Args {
			args[a.Index] = a.Value
		}
		if allowedBy(Default().Rules, c.Name, args...) {
			t.Errorf("%s is allowed by the profile", c.Label)
		}
	}
}

func TestOCIPerArch(t *testing.T) {
	p := Default()
	amd64, arm64 := p.OCI(specs.ArchX86_64), p.OCI(specs.ArchAARCH64)
	if diff := cmp.Diff([]specs.Arch{specs.ArchAARCH64}, arm64.Architectures); diff != "" {
		t.Errorf("arm64 architectures (-want +got):\n%s", diff)
	}
	if amd64.DefaultAction != specs.ActErrno || amd64.DefaultErrnoRet == nil || *amd64.DefaultErrnoRet != 1 {
		t.Errorf("default action %s errno %v, want SCMP_ACT_ERRNO EPERM", amd64.DefaultAction, amd64.DefaultErrnoRet)
	}
	has := func(s *specs.LinuxSeccomp, name string) bool {
		for _, r := range s.Syscalls {
			if slices.Contains(r.Names, name) {
				return true
			}
		}
		return false
	}
	for _, name := range []string{"open", "arch_prctl", "fork", "uretprobe"} {
		if !has(amd64, name) || has(arm64, name) {
			t.Errorf("%s: want it in the amd64 filter only", name)
		}
	}
	if !has(arm64, "openat") || !has(arm64, "clone") {
		t.Errorf("arm64 filter lacks openat or clone")
	}
}

func TestGeneratedFilesAreCurrent(t *testing.T) {
	p := Default()
	for _, arch := range Arches() {
		want, err := p.JSON(arch)
		if err != nil {
			t.Fatal(err)
		}
		name := p.FileName(arch)
		if *update {
			if err := os.WriteFile(name, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run 'go generate ./seccomp/...')", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run 'go generate ./seccomp/...' and commit it\n%s",
				name, cmp.Diff(string(want), string(got)))
		}
	}
}

func TestVersion(t *testing.T) {
	if got := (Version{2, 5, 5}).String(); got != "2.5.5" {
		t.Errorf("String() = %q", got)
	}
	if got := (Version{6, 10, 0}).String(); got != "6.10" {
		t.Errorf("String() = %q", got)
	}
	if !(Version{6, 9, 0}).Less(Version{6, 10, 0}) || (Version{6, 10, 0}).Less(Version{6, 10, 0}) {
		t.Error("Less is wrong")
	}
}

// allowedBy evaluates rules the way libseccomp does for an allowlist: a call
// is allowed when some ALLOW rule naming it has every condition true.
func allowedBy(rules []Rule, name string, args ...uint64) bool {
	for _, r := range rules {
		if r.Action != specs.ActAllow || !slices.Contains(r.Names, name) {
			continue
		}
		all := true
		for _, a := range r.Args {
			var v uint64
			if int(a.Index) < len(args) {
				v = args[a.Index]
			}
			all = all && matches(a, v)
		}
		if all {
			return true
		}
	}
	return false
}

func matches(a specs.LinuxSeccompArg, v uint64) bool {
	switch a.Op {
	case specs.OpEqualTo:
		return v == a.Value
	case specs.OpMaskedEqual:
		return v&a.Value == a.ValueTwo
	default:
		// other operators: below
	}
	panic("matches: operator not used by this profile: " + string(a.Op))
}
