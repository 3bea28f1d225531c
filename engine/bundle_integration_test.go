//go:build integration && linux

package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/internal/testutil"
	"github.com/agentbox/agentbox/policy"
)

// The runtime CLI's engine writes a synthesized root into a tmpfs on the
// bundle's root directory, nosuid and nodev; the teardown's removal of the
// bundle unmounts it and leaves no mount under the run directory, and so
// does the run directory's removal after a crash left it mounted.
func TestRootTmpfsIsWrittenAndUnmountedAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	eng, ok := OpenRuntime(Runtime{Name: "runc"}).(Runtime)
	if !ok || !eng.RootTmpfs {
		t.Fatal("OpenRuntime does not ask for a tmpfs root")
	}
	s := &specs.Spec{Root: &specs.Root{Path: "rootfs", Readonly: true}, Mounts: []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
	}}
	rootfs := policy.Rootfs{Symlinks: map[string]string{"/bin": "usr/bin"}, Files: map[string]string{"/etc/hosts": "127.0.0.1 localhost\n"}}
	// While a foreground runtime exits, the bundle goes but for its log.
	butTheLog := func(run string) error {
		bundle := filepath.Join(run, "bundle")
		if err := os.WriteFile(filepath.Join(bundle, runtimeLogName), []byte("{}\n"), 0o600); err != nil {
			return err
		}
		if err := removeBundle(run, runtimeLogName); err != nil {
			return err
		}
		if got := mountsUnder(run); got != nil {
			t.Errorf("mounts left under the run directory with the log kept: %q", got)
		}
		if left, err := os.ReadDir(bundle); err != nil || len(left) != 1 || left[0].Name() != runtimeLogName {
			t.Errorf("the bundle with the log kept holds %v (%v), want the log alone", left, err)
		}
		return removeBundle(run, "")
	}
	all := func(run string) error { return removeBundle(run, "") }
	for _, remove := range []func(string) error{all, butTheLog, removeRunDir} {
		run := t.TempDir()
		bundle := filepath.Join(run, "bundle")
		if err := os.Mkdir(bundle, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := eng.WriteBundle(bundle, s, rootfs); err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(bundle, "rootfs")
		t.Cleanup(func() { _ = unix.Unmount(root, unix.MNT_DETACH) })
		if got := mountsUnder(run); !slices.Equal(got, []string{root}) {
			t.Fatalf("mounts under the run directory %q, want the root's tmpfs %s", got, root)
		}
		var st unix.Statfs_t
		if err := unix.Statfs(root, &st); err != nil || st.Type != unix.TMPFS_MAGIC || st.Flags&unix.ST_NOSUID == 0 || st.Flags&unix.ST_NODEV == 0 {
			t.Errorf("root: statfs type %#x flags %#x (%v), want a nosuid, nodev tmpfs", st.Type, st.Flags, err)
		}
		if b, err := os.ReadFile(filepath.Join(root, "etc/hosts")); err != nil || string(b) != rootfs.Files["/etc/hosts"] {
			t.Errorf("etc/hosts in the root: %q, %v", b, err)
		}
		if err := remove(run); err != nil {
			t.Fatal(err)
		}
		if got := mountsUnder(run); got != nil {
			t.Errorf("mounts left under the run directory: %q", got)
		}
		if _, err := os.Lstat(bundle); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("bundle still there: %v", err)
		}
	}
	// Without RootTmpfs (a containerd shim's runtime), the root stays on disk.
	run := t.TempDir()
	if err := (Runtime{Name: "runc"}).WriteBundle(run, s, rootfs); err != nil {
		t.Fatal(err)
	}
	if got := mountsUnder(run); got != nil {
		t.Errorf("a root without RootTmpfs is a mount: %q", got)
	}
}
