package policy

import (
	"strings"
	"testing"
)

// Under runsc the plan binds no gateway socket and covers no workspace
// socket (the Sentry reaches no host socket; init's bridge gets the
// gateway from the launcher), applies no Landlock (the Sentry has none)
// and says these differences as residuals, and that the root-owned
// workspace's ACL grant is not seen by the Sentry; on runc the same host gets all
// three and the socket residual.
func TestGvisorPlan(t *testing.T) {
	plan := func(runtime string) *Plan {
		t.Helper()
		f := newFakeFS()
		f.dir("/srv/proj", 0, 0)
		h := testHost(f)
		f.file("/usr/bin/"+runtime, 0o755, 0)
		f.path[runtime] = "/usr/bin/" + runtime
		h.WorkspaceSockets, h.LandlockABI = []string{"app.sock"}, 7
		p, err := Resolve(Policy{Runtime: runtime}, []string{"sh"}, h, Run{ID: "R", Bundle: "/run/agentbox/runs/R/bundle", Dir: "/run/agentbox/runs/R", GatewayToken: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	codes := func(p *Plan) string {
		var c []string
		for _, r := range p.Residuals {
			c = append(c, r.Code)
		}
		return strings.Join(c, " ")
	}
	g := plan("runsc")
	if g.GatewaySocket == "" {
		t.Fatal("runsc: no gateway: init's bridge has nothing to relay to")
	}
	for _, m := range g.Mounts {
		if m.Destination == GatewaySocket || m.Kind == KindCover {
			t.Errorf("runsc: mount %+v: the Sentry reaches no host socket, nothing to bind or cover", m)
		}
	}
	if g.Landlock != nil {
		t.Errorf("runsc: Landlock planned (%+v): the Sentry has none", g.Landlock)
	}
	if c := codes(g); !strings.Contains(c, "gvisor-landlock-absent") || !strings.Contains(c, "gvisor-sentry-cgroup-namespace") || strings.Contains(c, "gvisor-workspace-grant") || strings.Contains(c, "workspace-socket-after-launch") {
		t.Errorf("runsc residuals %q", c)
	}
	r := plan("runc")
	if len(mountsOf(r, KindCover)) != 1 || r.Landlock == nil || strings.Contains(codes(r), "gvisor") {
		t.Errorf("runc: covers %v, Landlock %v, residuals %q", mountsOf(r, KindCover), r.Landlock, codes(r))
	}
}
