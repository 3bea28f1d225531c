package containerd

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/engine"
	"github.com/agentbox/agentbox/ledger"
)

// The runc shim keeps the runtime's state in ROOT/agentbox/ID: teardown
// deletes there, and only runs the runtime when the shim left something;
// what stays is named.
func TestTeardownProvesTheShimsRuntimeState(t *testing.T) {
	for _, tc := range []struct {
		name             string
		state, removes   bool
		wantCall, wantOK bool
	}{
		{name: "gone already", wantOK: true},
		{name: "left and deleted", state: true, removes: true, wantCall: true, wantOK: true},
		{name: "left and kept", state: true, wantCall: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root, id := filepath.Join(dir, "root"), "20261201T000000.000Z-0123abcd"
			calls := filepath.Join(dir, "calls")
			// Called as: --root ROOT delete [--force] ID (or kill/state).
			script := "#!/bin/sh\necho \"$*\" >>" + calls + "\n"
			if tc.removes {
				script += "[ \"$3\" = delete ] && rm -rf \"$2/$5\" && exit 0\n"
			}
			script += "echo 'container does not exist' >&2; exit 1\n"
			rt := filepath.Join(dir, "runc")
			if err := os.WriteFile(rt, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(root, Namespace, id)
			if tc.state {
				if err := os.MkdirAll(state, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			runDir := filepath.Join(dir, "run")
			if err := os.MkdirAll(filepath.Join(runDir, "bundle"), 0o700); err != nil {
				t.Fatal(err)
			}
			e := Opener("/nonexistent/containerd.sock")(engine.Runtime{Name: "runc", Path: rt, Root: root}).(*Engine)
			td := e.Teardown(context.Background(), engine.Target{ID: id, RunDir: runDir})
			_, err := os.Stat(calls)
			if called := err == nil; called != tc.wantCall {
				t.Errorf("runtime called: %v, want %v", called, tc.wantCall)
			}
			named := slices.ContainsFunc(td.RuntimeStateLeft, func(s string) bool { return strings.Contains(s, state) })
			if tc.wantOK == named || tc.wantOK != (td.Decision == ledger.DecisionClean) {
				t.Errorf("decision %s, state left %q", td.Decision, td.RuntimeStateLeft)
			}
		})
	}
}
