package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runWith is the run of TestResolveGateway: its directory and token.
var runWith = Run{ID: "R", Dir: "/run/agentbox/runs/R", Bundle: "/run/agentbox/runs/R/bundle", GatewayToken: "agentbox-gw-test"}

// With a gateway token the plan places the gateway's socket in the run
// directory and binds it, and the agent adapter's changes are in the plan
// Resolve returns: the command and environment are final.
func TestResolveGateway(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 0, 0)
	f.file("/usr/bin/codex", 0o755, 0)
	f.path["codex"] = "/usr/bin/codex"
	plan, err := Resolve(Policy{}, []string{"codex", "exec", "hi"}, testHost(f), runWith)
	if err != nil {
		t.Fatal(err)
	}
	if want := "/run/agentbox/runs/R/gateway/gateway.sock"; plan.GatewaySocket != want {
		t.Errorf("gateway socket %q, want %q", plan.GatewaySocket, want)
	}
	want := Mount{Kind: KindRuntime, Source: plan.GatewaySocket, Destination: GatewaySocket, ReadOnly: true, Options: []string{"noexec"}}
	if !slices.ContainsFunc(plan.Mounts, func(m Mount) bool { return cmp.Equal(m, want) }) {
		t.Errorf("mounts %+v lack the gateway's %+v", plan.Mounts, want)
	}
	if plan.Command[0] != "/usr/bin/codex" || len(plan.Command) <= 3 || !slices.Contains(plan.Command, "exec") {
		t.Errorf("command %q: want codex's own, with the adapter's overrides", plan.Command)
	}
	for _, kv := range []string{"AGENTBOX_GATEWAY_TOKEN=agentbox-gw-test", "HTTPS_PROXY=" + GatewayURL, "TERM=xterm"} {
		if !slices.Contains(plan.Env, kv) {
			t.Errorf("env %q lacks %s", plan.Env, kv)
		}
	}
	if plan.Agent.Name != "codex" || !plan.Agent.Permission.AutoApprove || !slices.Contains(plan.Agent.TokenVars, "AGENTBOX_GATEWAY_TOKEN") {
		t.Errorf("agent %+v: want codex, auto-approving (exec), with the token's variables", plan.Agent)
	}
	if strings.Contains(strings.Join(plan.Command, " "), "agentbox-gw-test") {
		t.Errorf("the token is on the command line: %q", plan.Command)
	}
}

// Without a token there is no gateway, no adapter and no bind; a token
// without a run directory for its socket cannot be planned.
func TestResolveWithoutGateway(t *testing.T) {
	plan, err := resolve(t, Policy{}, []string{"sh"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.GatewaySocket != "" || !cmp.Equal(plan.Agent, Agent{}) || !slices.Equal(plan.Command, []string{"/usr/bin/sh"}) || len(mountsOf(plan, KindRuntime)) != 0 {
		t.Errorf("socket %q agent %+v command %q runtime mounts %+v", plan.GatewaySocket, plan.Agent, plan.Command, mountsOf(plan, KindRuntime))
	}
	f := newFakeFS()
	f.dir("/srv/proj", 0, 0)
	var in *InputError
	if _, err := Resolve(Policy{}, []string{"sh"}, testHost(f), Run{ID: "R", GatewayToken: "t"}); !errors.As(err, &in) {
		t.Errorf("a token without a run directory: %v, want bad input", err)
	}
	if _, err := Resolve(Policy{}, []string{"sh"}, testHost(f), Run{Target: "mainframe"}); !errors.As(err, &in) || !strings.Contains(err.Error(), `unknown target "mainframe"`) {
		t.Errorf("an unknown target: %v, want bad input naming it", err)
	}
}

// A container engine's plan (compose) is a branch of Resolve on the
// target, not forged host facts: no runtime looked up, no init, no gateway
// or adapter of agentbox's, limits the engine's daemon applies, host ids,
// no terminal, and agentbox's AppArmor profile where AppArmor is enabled.
func TestResolveForAnEngine(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 1000, 1000)
	h := testHost(f)
	h.InitPath, h.Terminal, h.CanLimit, h.LimitReason = "/usr/lib/agentbox/agentbox-init", true, false, "no delegation"
	h.AppArmor = true
	p := Policy{Runtime: "no-such-runtime-on-this-host"}
	plan, err := Resolve(p, []string{"sh"}, h, Run{Target: TargetEngine, GatewayToken: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Target != TargetEngine || plan.Runtime != (Runtime{Name: "no-such-runtime-on-this-host"}) || plan.Init != "" || plan.GatewaySocket != "" || !cmp.Equal(plan.Agent, Agent{}) {
		t.Errorf("target %s runtime %+v init %q gateway %q agent %+v", plan.Target, plan.Runtime, plan.Init, plan.GatewaySocket, plan.Agent)
	}
	if plan.Limits == nil || plan.Terminal || plan.LSM.Kind != LSMAppArmor || plan.CgroupsPath != "" {
		t.Errorf("limits %+v terminal %v lsm %+v cgroup %q", plan.Limits, plan.Terminal, plan.LSM, plan.CgroupsPath)
	}
	if id := plan.Identity; id.IDMap.Mode != IDEngine || id.UID != 1000 || id.Init.Split {
		t.Errorf("identity %+v: want the owner's host ids, mapped by the engine", id)
	}
	for _, r := range plan.Residuals {
		if r.Code != "workspace-socket-after-launch" {
			t.Errorf("residual %s: the engine's sandbox has none of agentbox's", r.Code)
		}
	}
	rootless := h
	rootless.EUID, rootless.EGID = 1000, 1000
	if plan, err := Resolve(Policy{}, []string{"sh"}, rootless, Run{Target: TargetEngine}); err != nil || plan.Identity.IDMap.Mode != IDEngine || slices.ContainsFunc(plan.Residuals, func(r Residual) bool { return r.Code == ResidualRootlessSingle }) {
		t.Errorf("rootless engine plan: %+v, %v", plan, err)
	}
}

// Rootless single-id mode is decided once, from the host's subordinate-id
// facts, with one residual that says what is missing and how to fix it.
func TestRootlessIDMode(t *testing.T) {
	ranges := SubIDs{User: "ana", UID: IDRange{Start: 200000, Count: 65536}, GID: IDRange{Start: 300000, Count: 65536}, NewIDMap: true}
	for _, tc := range []struct {
		name string
		sub  func(*SubIDs)
		want IDMap
		fix  string
	}{
		{"subordinate ids", func(*SubIDs) {}, IDMap{Mode: IDSubIDs, UIDs: ranges.UID, GIDs: ranges.GID}, ""},
		{"no subgid", func(s *SubIDs) { s.GID = IDRange{} }, IDMap{Mode: IDSingle}, "usermod --add-subuids 200000-265535 --add-subgids 200000-265535 ana"},
		{"no newuidmap", func(s *SubIDs) { s.NewIDMap = false }, IDMap{Mode: IDSingle}, "apt-get install uidmap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := resolve(t, Policy{}, []string{"sh"}, func(f *fakeFS, h *Host) {
				f.dir("/srv/proj", 1000, 1000)
				h.EUID, h.EGID, h.SubIDs = 1000, 1000, ranges
				tc.sub(&h.SubIDs)
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, plan.Identity.IDMap); d != "" {
				t.Errorf("id map (-want +got):\n%s", d)
			}
			var codes []string
			for _, r := range plan.Residuals {
				if r.Code == ResidualRootlessSingle && !strings.Contains(r.Reason, tc.fix) {
					t.Errorf("residual %q does not say %q", r.Reason, tc.fix)
				}
				codes = append(codes, r.Code)
			}
			if n := strings.Count(strings.Join(codes, " "), ResidualRootlessSingle); (n == 1) != (tc.fix != "") || n > 1 {
				t.Errorf("residuals %v", codes)
			}
		})
	}
}

// The Landlock ruleset is the plan's: every mount's destination (written
// only where the mount is read-write), the fixed system paths, and TCP to
// the gateway's port alone unless the policy allows local TCP; none where
// an LSM label confines the agent or an engine runs the sandbox.
func TestResolveLandlock(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 0, 0)
	h := testHost(f)
	h.WorkspaceSockets = []string{"run/nvim.sock"}
	plan, err := Resolve(Policy{}, []string{"sh"}, h, runWith)
	if err != nil {
		t.Fatal(err)
	}
	ll := plan.Landlock
	if ll == nil || !ll.RestrictTCP || !slices.Equal(ll.ConnectTCP, []uint16{GatewayPort}) || !slices.Equal(ll.BindTCP, []uint16{GatewayPort}) {
		t.Fatalf("landlock %+v: want TCP to the gateway's port only", ll)
	}
	want := map[string]LandlockPath{
		"/srv/proj":   {Path: "/srv/proj", Write: true},
		"/usr":        {Path: "/usr"},
		"/bin":        {Path: "/bin", Optional: true},
		"/dev":        {Path: "/dev", Write: true, IoctlDev: true},
		GatewaySocket: {Path: GatewaySocket},
		// A cover is optional: its socket may be gone before the agent
		// starts (a concurrent run's canary), and with it the cover.
		"/srv/proj/run/nvim.sock": {Path: "/srv/proj/run/nvim.sock", Optional: true},
	}
	for _, p := range ll.Paths {
		if w, ok := want[p.Path]; ok && p != w {
			t.Errorf("landlock path %+v, want %+v", p, w)
		}
		delete(want, p.Path)
	}
	if len(want) > 0 {
		t.Errorf("landlock lacks %v", want)
	}
	if !slices.IsSortedFunc(ll.Paths, func(a, b LandlockPath) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("paths not sorted: %+v", ll.Paths)
	}
	local, err := Resolve(Policy{Network: Network{LocalTCP: true}}, []string{"sh"}, testHost(f), runWith)
	if err != nil || local.Landlock == nil || local.Landlock.RestrictTCP {
		t.Errorf("local TCP allowed: landlock %+v (%v), want TCP unrestricted", local.Landlock, err)
	}
	h = testHost(f)
	h.AppArmor, h.AppArmorReady = true, true
	if aa, err := Resolve(Policy{}, []string{"sh"}, h, runWith); err != nil || aa.Landlock != nil {
		t.Errorf("with AppArmor: landlock %+v (%v), want none", aa.Landlock, err)
	}
	if eng, err := Resolve(Policy{}, []string{"sh"}, testHost(f), Run{Target: TargetEngine}); err != nil || eng.Landlock != nil {
		t.Errorf("for an engine: landlock %+v (%v), want none", eng.Landlock, err)
	}
}

// RootlessIDMap is the one decision of the rootless mode, the plan's and
// doctor's: subordinate ranges need both files and newuidmap.
func TestRootlessIDMap(t *testing.T) {
	u, g := IDRange{Start: 100000, Count: 65536}, IDRange{Start: 200000, Count: 65536}
	for _, tc := range []struct {
		name string
		sub  SubIDs
		mode IDMode
		fix  string
	}{
		{"subids and newidmap", SubIDs{User: "ana", UID: u, GID: g, NewIDMap: true}, IDSubIDs, ""},
		{"no subids", SubIDs{User: "ana", NewIDMap: true}, IDSingle, "usermod --add-subuids 200000-265535 --add-subgids 200000-265535 ana"},
		{"subuid without subgid", SubIDs{User: "ana", UID: u, NewIDMap: true}, IDSingle, "usermod --add-subuids"},
		{"no newuidmap", SubIDs{User: "ana", UID: u, GID: g}, IDSingle, "apt-get install uidmap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, res := RootlessIDMap(tc.sub)
			if m.Mode != tc.mode || (res == nil) != (tc.fix == "") {
				t.Fatalf("mode %s residual %+v, want %s with fix %q", m.Mode, res, tc.mode, tc.fix)
			}
			if res != nil && (res.Code != ResidualRootlessSingle || !strings.Contains(res.Reason, tc.fix)) {
				t.Errorf("residual %+v, want %s naming %q", res, ResidualRootlessSingle, tc.fix)
			}
			if tc.mode == IDSubIDs && (m.UIDs != u || m.GIDs != g) {
				t.Errorf("ranges %+v %+v, want %+v %+v", m.UIDs, m.GIDs, u, g)
			}
		})
	}
}
