package nsexec

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The link's helper call comes from the file beside it, with the shim's
// arguments after it; a file anyone else could have written, a link in its
// place, or a call that is not fds-exec's is refused.
func TestShimCall(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, ShimRuntime)
	write := func(data string, mode os.FileMode) {
		t.Helper()
		_ = os.Remove(ShimArgs(link))
		if err := os.WriteFile(ShimArgs(link), []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(ShimArgs(link), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(`["fds-exec","--stderr","stdout","--","/usr/sbin/runc"]`, 0o600)
	got, err := shimCall([]string{link, "--root", "/run/r", "create", "x"})
	want := []string{FdsExec, "--stderr", "stdout", "--", "/usr/sbin/runc", "--root", "/run/r", "create", "x"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("call %q, %v; want %q", got, err, want)
	}
	if !IsShimRuntime(link) || IsShimRuntime("/usr/lib/agentbox/agentbox-init") {
		t.Error("IsShimRuntime does not go by the link's name")
	}
	for name, bad := range map[string]func(){
		"group-writable": func() { write(`["fds-exec","--","/usr/sbin/runc"]`, 0o620) },
		"not fds-exec":   func() { write(`["mntns-exec","--","/usr/sbin/runc"]`, 0o600) },
		"no runtime":     func() { write(`["fds-exec","--stderr","stdout"]`, 0o600) },
		"not JSON":       func() { write(`exec /bin/sh`, 0o600) },
		"a link": func() {
			write(`["fds-exec","--","/usr/sbin/runc"]`, 0o600)
			other := filepath.Join(dir, "other.json")
			if err := os.Rename(ShimArgs(link), other); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, ShimArgs(link)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		bad()
		if got, err := shimCall([]string{link, "state", "x"}); err == nil {
			t.Errorf("%s: accepted as %q", name, got)
		}
	}
}
