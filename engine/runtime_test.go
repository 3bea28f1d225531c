//go:build linux

package engine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestRuntimeMessage(t *testing.T) {
	in := `time="2026-11-29T07:55:42Z" level=error msg="runc create failed: unable to start container process: error \"x\""` + "\n"
	if got, want := runtimeMessage(in), `runc create failed: unable to start container process: error "x"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := runtimeMessage("plain failure\n\n"); got != "plain failure" {
		t.Errorf("got %q", got)
	}
}

func TestLogErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "runtime.log")
	log := `{"level":"info","msg":"started"}` + "\n" + `{"level":"error","msg":"mount failed"}` + "\nnot json\n" + `{"level":"fatal","msg":"giving up"}`
	if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := logErrors(p); got != "mount failed; giving up" {
		t.Errorf("got %q", got)
	}
	if got := logErrors(filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Errorf("missing log: %q", got)
	}
}

// A foreground runtime's log is read when the runtime is collected: the
// bundle that holds it may be gone before the run is settled (teardown
// removes it meanwhile), and its error still makes Wait's error.
func TestForegroundLogIsReadWhenCollected(t *testing.T) {
	p := filepath.Join(t.TempDir(), "runtime.log")
	if err := os.WriteFile(p, []byte(`{"level":"error","msg":"cgroup not removed"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &Foreground{name: "runc", initFD: -1, done: make(chan struct{})}
	f.collected(nil, p)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if code, err := f.Wait(); code != 0 || err == nil || !strings.Contains(err.Error(), "cgroup not removed") {
		t.Errorf("Wait = %d, %v; want 0 and the log's error", code, err)
	}
}

func TestCmdErrorNotFoundOnlyForLookups(t *testing.T) {
	r := Runtime{Name: "runc"}
	if err := r.cmdError("delete", errors.New("exit 1"), `msg="container does not exist"`); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of a missing container: %v, want ErrNotFound", err)
	}
	if err := r.cmdError("create", errors.New("exit 1"), "exec: no such file or directory"); errors.Is(err, ErrNotFound) {
		t.Errorf("a failed create is not a missing container: %v", err)
	}
}

// Mount points come out of mountinfo with the kernel's octal escapes
// decoded, so that a run directory with a blank in its name still finds
// the mounts left under it.
func TestMountPointsUnder(t *testing.T) {
	table := strings.Join([]string{
		`22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw`,
		`30 22 0:40 / /run/a\040b rw - tmpfs tmpfs rw`,
		`31 30 0:41 / /run/a\040b/rootfs rw - overlay overlay rw`,
		`32 30 0:42 / /run/a\040b/new\012line\011tab rw master:3 - tmpfs tmpfs rw`,
		`33 22 0:43 / /run/a\040bc rw - tmpfs tmpfs rw`,
		`34 22 0:44 / /run/a rw - tmpfs tmpfs rw`,
	}, "\n") + "\n"
	for _, tc := range []struct {
		dir  string
		want []string
	}{
		{"/run/a b", []string{"/run/a b", "/run/a b/rootfs", "/run/a b/new\nline\ttab"}},
		{"/run/a b/rootfs", []string{"/run/a b/rootfs"}},
		{"/run/a", []string{"/run/a"}},
		{"/run/nothing", nil},
		{"", nil},
	} {
		if got := mountPointsUnder(strings.NewReader(table), tc.dir); !slices.Equal(got, tc.want) {
			t.Errorf("mountPointsUnder(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
	if got := mountPointsUnder(strings.NewReader("22 1 8:1 / /run/a\n"), "/run/a"); got != nil {
		t.Errorf("a malformed table listed %q", got)
	}
}

func TestUserNSTranslate(t *testing.T) {
	n := UserNS{UID: 1001, GID: 1001, SubUID: IDRange{Start: 100000, Count: 65536}, SubGID: IDRange{Start: 100000, Count: 65536}}
	host := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 1001}, {ContainerID: 1001, HostID: 1001, Size: 1}, {ContainerID: 1002, HostID: 101002, Size: 64534}}
	u, g, err := n.Translate(host, host)
	if err != nil {
		t.Fatal(err)
	}
	want := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1, Size: 1001}, {ContainerID: 1001, HostID: 0, Size: 1}, {ContainerID: 1002, HostID: 1003, Size: 64534}}
	if d := cmp.Diff(want, u); d != "" || !cmp.Equal(u, g) {
		t.Errorf("translate (-want +got):\n%s", d)
	}
	// Ids outside the user's own and subordinate ones cannot be expressed.
	if _, _, err := n.Translate([]specs.LinuxIDMapping{{ContainerID: 0, HostID: 500000, Size: 10}}, host); err == nil {
		t.Error("translated ids the namespace does not hold")
	}
	if _, _, err := n.Translate([]specs.LinuxIDMapping{{ContainerID: 0, HostID: 165000, Size: 1000}}, host); err == nil {
		t.Error("translated a range that runs past the subordinate range")
	}
}
