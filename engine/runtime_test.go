package engine

import (
	"errors"
	"os"
	"path/filepath"
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

func TestCmdErrorNotFoundOnlyForLookups(t *testing.T) {
	r := Runtime{Name: "runc"}
	if err := r.cmdError("delete", errors.New("exit 1"), `msg="container does not exist"`); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of a missing container: %v, want ErrNotFound", err)
	}
	if err := r.cmdError("create", errors.New("exit 1"), "exec: no such file or directory"); errors.Is(err, ErrNotFound) {
		t.Errorf("a failed create is not a missing container: %v", err)
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/tab\011x`: "/tab\tx", `/end\04`: `/end\04`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
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
