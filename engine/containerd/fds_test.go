package containerd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/internal/nsexec"
)

func TestHelperCallPassesArguments(t *testing.T) {
	h := helperCall{helper: "/opt/it's/agentbox-init", runtime: "/usr/sbin/runc", fdsSocket: "/run/a b/fds.sock", nests: "/run/x/nested-mounts.json", stderrIsStdout: true}
	want := []string{"fds-exec", "--fds-socket", "/run/a b/fds.sock", "--compose", "/run/x/nested-mounts.json", "--stderr", "stdout", "--", "/usr/sbin/runc"}
	if got := h.call(); !slices.Equal(got, want) {
		t.Fatalf("call %q, want %q", got, want)
	}
}

func TestShimRuntime(t *testing.T) {
	rt := engine.Runtime{Name: "runc", Path: "/usr/sbin/runc", Helper: "/usr/lib/agentbox-init"}
	bundle := t.TempDir()
	got, err := shimRuntime(rt, bundle, 0, false)
	if err != nil || got != rt.Path {
		t.Errorf("without files, hidden mount or nested binds: %q, %v; want the runtime itself", got, err)
	}
	got, err = shimRuntime(rt, bundle, 1, false)
	if err != nil || got != filepath.Join(bundle, shimRuntimeFile) {
		t.Fatalf("with a file to pass: %q, %v; want the link", got, err)
	}
	if target, err := os.Readlink(got); err != nil || target != rt.Helper {
		t.Errorf("the link points at %q (%v), want the helper %q", target, err, rt.Helper)
	}
	call := func(path string) []string {
		t.Helper()
		data, err := os.ReadFile(nsexec.ShimArgs(path))
		if err != nil {
			t.Fatal(err)
		}
		var c []string
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := call(got); !slices.Contains(c, filepath.Join(bundle, fdsSocketFile)) || c[len(c)-1] != rt.Path {
		t.Errorf("the call %q does not name the bundle's socket and the runtime", c)
	}
	if st, err := os.Stat(nsexec.ShimArgs(got)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("call file mode %v, %v; want 0600", st.Mode(), err)
	}
	// One output: the call gives the create's stderr its stdout, even with
	// nothing else for the helper to do.
	got, err = shimRuntime(rt, t.TempDir(), 0, true)
	if err != nil || !slices.Contains(call(got), "--stderr") {
		t.Errorf("stdout as stderr: %q, %v; want a call passing --stderr stdout", got, err)
	}
	rt.Helper = ""
	if _, err := shimRuntime(rt, bundle, 1, false); err == nil {
		t.Error("no helper and a file to pass: accepted")
	}
}

func TestShimArgs(t *testing.T) {
	addr, id := "/run/agentbox-containerd/containerd.sock", "20261201T1.2Z-ab"
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "agentbox", "-id", id, "-address", addr}, true},
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "moby", "-id", id, "-address", addr}, false},
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "agentbox", "-id", id + "x", "-address", addr}, false},
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "agentbox", "-id", id, "-address", "/run/containerd/containerd.sock"}, false},
		{[]string{"/bin/sleep", "-namespace", "agentbox", "-id", id, "-address", addr}, false},
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "agentbox", "-id"}, false},
		// the shim's start and the daemon's cleanup after it, as containerd 1.6 runs them
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "agentbox", "-address", addr, "-publish-binary", "/usr/bin/containerd", "-id", id, "start"}, false},
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "agentbox", "-address", addr, "-publish-binary", "/usr/bin/containerd", "-id", id, "-bundle", "/run/x/" + id, "delete"}, false},
		{[]string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "agentbox", "-id", id, "-address", addr, "-debug"}, true},
		{nil, false},
	} {
		if got := shimArgs(tc.argv, addr, id); got != tc.want {
			t.Errorf("shimArgs(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

func TestRecorded(t *testing.T) {
	bundle := t.TempDir()
	if _, ok := Recorded(bundle); ok {
		t.Error("a bundle without a record is containerd's")
	}
	if err := writeRecord(bundle, Record{Address: "/run/x.sock", Namespace: Namespace}); err != nil {
		t.Fatal(err)
	}
	open, ok := Recorded(bundle)
	if !ok {
		t.Fatal("the recorded run is not containerd's")
	}
	if e := open(engine.Runtime{Name: "runc"}).(*Engine); e.Address != "/run/x.sock" {
		t.Errorf("engine on %q, want the recorded /run/x.sock", e.Address)
	}
	if err := os.WriteFile(filepath.Join(bundle, RecordFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := Recorded(bundle); !ok {
		t.Error("a damaged record is no longer containerd's run")
	}
}

func TestOneOutput(t *testing.T) {
	a, b := os.Stdin, os.Stdout
	for _, tc := range []struct {
		o    engine.CreateOptions
		want bool
	}{
		{engine.CreateOptions{Stdio: engine.Stdio{Out: a, Err: a}}, true},
		{engine.CreateOptions{Stdio: engine.Stdio{Out: a, Err: b}}, false},
		{engine.CreateOptions{Stdio: engine.Stdio{Out: nil, Err: nil}}, false},
		{engine.CreateOptions{Stdio: engine.Stdio{Out: a, Err: a}, ConsoleSocket: "/run/c.sock"}, false},
	} {
		if got := oneOutput(tc.o); got != tc.want {
			t.Errorf("oneOutput(%+v) = %v, want %v", tc.o, got, tc.want)
		}
	}
}
