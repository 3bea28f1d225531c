package seccomp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/seccomp/profiles"
)

func allDenied() []string {
	out := profiles.DeniedSyscalls()
	for _, c := range profiles.DeniedCalls() {
		out = append(out, c.Label)
	}
	return out
}

func TestWeaknessesOfForeignProfiles(t *testing.T) {
	amd64 := Target{Arch: specs.ArchX86_64}
	tests := []struct {
		file   string
		target Target
		want   []string
	}{
		{"allow-all.json", amd64, allDenied()},
		{"docker-like.json", amd64, []string{
			"name_to_handle_at", "process_vm_readv", "process_vm_writev", "ptrace", "socket(AF_PACKET)",
			"socket(AF_INET, SOCK_RAW)", "socket(AF_INET, SOCK_PACKET)",
		}},
		{"docker-like.json", Target{Arch: specs.ArchX86_64, Kernel: profiles.Version{Major: 4, Minor: 4}}, []string{
			"name_to_handle_at", "socket(AF_PACKET)", "socket(AF_INET, SOCK_RAW)", "socket(AF_INET, SOCK_PACKET)",
		}},
		{"docker-like.json", Target{Arch: specs.ArchX86_64, Caps: []string{"CAP_SYS_ADMIN"}}, []string{
			"bpf", "fanotify_init", "fsconfig", "fsmount", "fsopen", "fspick", "lookup_dcookie",
			"mount", "mount_setattr", "move_mount", "name_to_handle_at", "open_tree",
			"perf_event_open", "process_vm_readv", "process_vm_writev", "ptrace", "quotactl",
			"quotactl_fd", "setdomainname", "sethostname", "setns", "syslog", "umount2", "unshare",
			"clone3", "clone(CLONE_NEWUSER)", "socket(AF_PACKET)",
			"socket(AF_INET, SOCK_RAW)", "socket(AF_INET, SOCK_PACKET)",
		}},
		{"mount-with-args.json", amd64, []string{
			"keyctl (left to a user-space supervisor)",
			"mount (allowed for some arguments)",
			"ptrace (left to a user-space supervisor)",
			"clone(CLONE_NEWUSER)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := LoadFileFor(filepath.Join("testdata", tt.file), tt.target)
			if err != nil {
				t.Fatal(err)
			}
			got := Weaknesses(p)
			if diff := cmp.Diff(sortedCopy(tt.want), sortedCopy(got)); diff != "" {
				t.Errorf("Weaknesses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWeaknessesDefaultLog(t *testing.T) {
	p, err := LoadFileFor(filepath.Join("testdata", "log-all-but-mount.json"), Target{Arch: specs.ArchX86_64})
	if err != nil {
		t.Fatal(err)
	}
	got := Weaknesses(p)
	for _, refused := range []string{"mount", "umount2"} {
		if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, refused+" ") || s == refused }) {
			t.Errorf("%s is refused by the profile but reported: %v", refused, got)
		}
	}
	for _, want := range []string{"unshare (allowed for some arguments)", "ptrace", "clone3", "socket(AF_PACKET)"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in %v", want, got)
		}
	}
}

func TestWeaknessesNilProfileAllowsEverything(t *testing.T) {
	if diff := cmp.Diff(allDenied(), Weaknesses(nil)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAgentboxProfileHasNoWeakness cross-checks the profile data and the
// evaluator: agentbox's own profile must refuse everything it claims to.
func TestAgentboxProfileHasNoWeakness(t *testing.T) {
	for _, arch := range profiles.Arches() {
		if got := Weaknesses(profiles.Default().OCI(arch)); len(got) != 0 {
			t.Errorf("%s: agentbox's profile lets through %v", arch, got)
		}
	}
}

func TestGeneratedFileLoadsAsTheProfile(t *testing.T) {
	p := profiles.Default()
	for _, arch := range profiles.Arches() {
		got, err := LoadFileFor(filepath.Join("profiles", p.FileName(arch)), Target{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p.OCI(arch), got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", arch, diff)
		}
	}
}

func TestEvaluate(t *testing.T) {
	allowClone := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{
		Names: []string{"clone"}, Action: specs.ActAllow,
		Args: []specs.LinuxSeccompArg{{Index: 0, Value: 0x10000000, Op: specs.OpNotEqual}},
	}}}
	// Two conditions on one argument: runc ORs them, so "!= A and != B"
	// becomes "!= A or != B", which every value satisfies.
	orTrap := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{
		Names: []string{"socket"}, Action: specs.ActAllow,
		Args: []specs.LinuxSeccompArg{
			{Index: 0, Value: 17, Op: specs.OpNotEqual},
			{Index: 0, Value: 10, Op: specs.OpNotEqual},
		},
	}}}
	denyWithArgs := &specs.LinuxSeccomp{DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{
		Names: []string{"socket"}, Action: specs.ActErrno,
		Args: []specs.LinuxSeccompArg{{Index: 0, Value: 17, Op: specs.OpEqualTo}},
	}}}
	// A masked-equal datum with bits outside the mask: the filter masks
	// the datum too, so personality(0x10008) matches mask 0xff, datum 0x108.
	maskedDatum := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{
		Names: []string{"personality"}, Action: specs.ActAllow,
		Args: []specs.LinuxSeccompArg{{Index: 0, Value: 0xff, ValueTwo: 0x108, Op: specs.OpMaskedEqual}},
	}}}
	newUser := []profiles.ArgValue{{Index: 0, Value: 0x10000000}}
	packet := []profiles.ArgValue{{Index: 0, Value: 17}}
	tests := []struct {
		name  string
		p     *specs.LinuxSeccomp
		call  string
		fixed []profiles.ArgValue
		want  Verdict
	}{
		{"ne filter refuses the fixed value", allowClone, "clone", newUser, Refused},
		{"ne filter with free args", allowClone, "clone", nil, AllowedSomeArgs},
		{"same-index conditions are ORed", orTrap, "socket", packet, Allowed},
		{"deny rule covers the value", denyWithArgs, "socket", packet, Refused},
		{"deny rule with free args under allow default", denyWithArgs, "socket", nil, AllowedSomeArgs},
		{"unnamed syscall under allow default", denyWithArgs, "mount", nil, Allowed},
		{"unnamed syscall under errno default", allowClone, "mount", nil, Refused},
		{"masked datum is masked", maskedDatum, "personality", []profiles.ArgValue{{Index: 0, Value: 0x10008}}, Allowed},
		{"masked datum still refuses others", maskedDatum, "personality", []profiles.ArgValue{{Index: 0, Value: 0x10009}}, Refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Evaluate(tt.p, tt.call, tt.fixed); got != tt.want {
				t.Errorf("Evaluate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, json string
		want       string // substring of the error
	}{
		{"syntax", "{\n\"defaultAction\": \"SCMP_ACT_ERRNO\",\n}", "bad.json:3: invalid JSON"},
		{
			"type", "{\n\"defaultAction\": \"SCMP_ACT_ERRNO\",\n\"syscalls\": [{\"names\": \"read\"}]\n}",
			"bad.json:3: field syscalls.names: got a JSON string, want []string",
		},
		{"unknown field", "{\n\"defaultAction\": \"SCMP_ACT_ERRNO\",\n\"defaultActoin\": 1}", "bad.json:3: unknown field \"defaultActoin\""},
		{"missing default", `{"syscalls": []}`, "field defaultAction: missing"},
		{
			"bad action", `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "ALLOW"}]}`,
			"field syscalls[0].action: unknown action \"ALLOW\"",
		},
		{
			"bad op", `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 1, "op": "EQ"}]}]}`,
			"field syscalls[0].args[0]: unknown operator \"EQ\"",
		},
		{
			"bad index", `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 6, "value": 1, "op": "SCMP_CMP_EQ"}]}]}`,
			"field syscalls[0].args[0]: index 6",
		},
		{
			"name and names", `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"name": "read", "names": ["write"], "action": "SCMP_ACT_ALLOW"}]}`,
			"field syscalls[0].name: both name and names",
		},
		{
			"no names", `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"action": "SCMP_ACT_ALLOW"}]}`,
			"field syscalls[0].names: missing",
		},
		{
			"errno on allow", `{"defaultAction": "SCMP_ACT_ALLOW", "defaultErrnoRet": 1}`,
			"field defaultAction: errnoRet is set but action SCMP_ACT_ALLOW takes no errno",
		},
		{
			"min kernel", `{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["ptrace"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4"}}]}`,
			"minKernel: kernel version \"4\"",
		},
		{
			"both arch forms", `{"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64"], "archMap": [{"architecture": "SCMP_ARCH_X86_64"}]}`,
			"field archMap: both architectures and archMap",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.json", []byte(tt.json), Target{Arch: specs.ArchX86_64})
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FileError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "none.json"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("LoadFile of a missing file: %v", err)
	}
}

func TestLoadFileResolvesDockerRules(t *testing.T) {
	p, err := LoadFileFor(filepath.Join("testdata", "docker-like.json"), Target{Arch: specs.ArchAARCH64})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]specs.Arch{specs.ArchAARCH64, specs.ArchARM}, p.Architectures); diff != "" {
		t.Errorf("architectures (-want +got):\n%s", diff)
	}
	var names []string
	for _, s := range p.Syscalls {
		names = append(names, s.Names...)
	}
	for _, absent := range []string{"arch_prctl", "chroot", "mount"} {
		if slices.Contains(names, absent) {
			t.Errorf("%s should be resolved away for arm64 without capabilities", absent)
		}
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestLoggedFormIsSupervised: a notify rule is a supervisor's decision to
// the audit, which cannot know the listener answers EPERM; this is why the
// launcher audits the plain form and converts it after (docs/denials.md).
func TestLoggedFormIsSupervised(t *testing.T) {
	got := Check(profiles.Default().LoggedOCI(specs.ArchX86_64, "/s"))
	var names []string
	for _, w := range got {
		if w.Verdict != Supervised {
			t.Errorf("%s: %s, want supervised", w.Call, w.Verdict)
		}
		names = append(names, w.Syscall)
	}
	if diff := cmp.Diff(profiles.LoggedSyscalls(), names); diff != "" {
		t.Errorf("supervised calls differ from the logged list:\n%s", diff)
	}
}
