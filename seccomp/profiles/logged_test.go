package profiles

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestLoggedAreDenials(t *testing.T) {
	denied := DeniedSyscalls()
	l := Default().Logged
	for _, n := range l.Names {
		if !slices.Contains(denied, n) {
			t.Errorf("logged syscall %q is not one of the denials: the listener would refuse a call the profile allows", n)
		}
	}
	if slices.Contains(l.Names, "clone3") {
		t.Error("clone3 is logged: it must answer ENOSYS (libc falls back to clone), not the listener's EPERM")
	}
	if len(strings.Fields(l.Reason)) < 3 || l.MinKernel.IsZero() {
		t.Errorf("Logged lacks a reason or a minimum kernel: %+v", l)
	}
	got := LoggedSyscalls()
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("LoggedSyscalls() is not sorted and unique: %v", got)
	}
	// The brief of issue 13: these must be logged.
	for _, n := range []string{
		"mount", "umount2", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
		"mount_setattr", "pivot_root", "ptrace", "process_vm_readv", "process_vm_writev", "bpf",
		"keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module",
		"finit_module", "delete_module", "unshare", "setns", "perf_event_open", "userfaultfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register",
	} {
		if !slices.Contains(got, n) {
			t.Errorf("%s is not logged", n)
		}
	}
}

func TestLoggedOCIAddsOneNotifyRule(t *testing.T) {
	p := Default()
	for _, arch := range Arches() {
		plain, logged := p.OCI(arch), p.LoggedOCI(arch, "/run/x/denials.sock")
		if plain.ListenerPath != "" {
			t.Errorf("%s: OCI sets a listener path", arch)
		}
		if logged.ListenerPath != "/run/x/denials.sock" {
			t.Errorf("%s: listener path %q", arch, logged.ListenerPath)
		}
		n := len(logged.Syscalls)
		if n != len(plain.Syscalls)+1 {
			t.Fatalf("%s: %d rules, want %d", arch, n, len(plain.Syscalls)+1)
		}
		if diff := cmp.Diff(plain.Syscalls, logged.Syscalls[:n-1]); diff != "" {
			t.Errorf("%s: the other rules changed:\n%s", arch, diff)
		}
		last := logged.Syscalls[n-1]
		if last.Action != specs.ActNotify || !slices.Equal(last.Names, LoggedSyscalls()) || len(last.Args) != 0 || last.ErrnoRet != nil {
			t.Errorf("%s: last rule %+v", arch, last)
		}
	}
	if got := (Profile{}).LoggedOCI(specs.ArchX86_64, "/s"); got.ListenerPath != "" || len(got.Syscalls) != 0 {
		t.Errorf("a profile that logs nothing got %+v", got)
	}
}
