//go:build integration

package launcher

import (
	"testing"

	"github.com/agentbox/agentbox/internal/testutil"
)

// TestProbesHardenedAsRoot runs the self-test of the default policy in the
// host-binds default and in a busybox image root: every probe and host
// check gets its expected decision, the run exits 0 and leaves nothing.
func TestProbesHardenedAsRoot(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireBinary(t, "runc", "runc")
	roots := map[string]func(t *testing.T) string{
		"host-binds":     func(*testing.T) string { return "" },
		"busybox-rootfs": func(t *testing.T) string { return busyboxRoot(t, staticBusybox(t)) },
	}
	for name, root := range roots {
		t.Run(name, func(t *testing.T) {
			rootfs := root(t)
			// The probes are under test, not the runtime: where this host's
			// runtime has a CVE that --rootfs exposes, it is accepted
			// (TestDoctorAndRunAgree tests that refusal).
			o := probeSandbox{rootfs: rootfs, accept: []string{"runtime-vulnerable=the probes are under test, not the runtime"}}.run(t)
			if o.image != rootfs {
				t.Fatalf("the plan's image root is %q, want %q", o.image, rootfs)
			}
			for probe, want := range expectations() {
				r, ok := o.results[probe]
				switch {
				case !ok:
					t.Errorf("%s: no result", probe)
				case r.Decision != want || !r.Passed():
					t.Errorf("%s: %s %s, want %s in the hardened sandbox (%s)", probe, r.Decision, r.Observed, want, r.Detail)
				}
			}
			if o.code != ExitOK {
				t.Errorf("selftest exit %d, want %d\n%s", o.code, ExitOK, o.output)
			}
		})
	}
}
