package policy

import (
	"testing"
)

// A pod's plan (agentbox kube) is a branch of Resolve on the target: the
// host's LSM, cgroup, runtime and workspace sockets do not apply, the ids
// are the pod's fixed agent ids, and the plan names agentbox's AppArmor
// profile for the node to enforce, whatever this host has.
func TestResolveForKubernetes(t *testing.T) {
	f := newFakeFS()
	f.dir("/srv/proj", 1234, 1234)
	h := testHost(f)
	h.InitPath, h.Terminal, h.CanLimit, h.LimitReason = "/usr/lib/agentbox/agentbox-init", true, false, "no delegation"
	h.AppArmor, h.SELinux, h.LandlockABI = false, false, 3 // a host with no LSM and an old Landlock
	h.WorkspaceSockets = []string{"run/nvim.sock"}
	h.EUID, h.EGID = 1234, 1234 // rootless, with no subordinate ids
	p := Policy{Runtime: "no-such-runtime-on-this-host"}
	plan, err := Resolve(p, []string{"sh"}, h, Run{Target: TargetKubernetes, GatewayToken: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Target != TargetKubernetes || plan.Init != "" || plan.GatewaySocket != "" || plan.Terminal || plan.Landlock != nil {
		t.Errorf("target %s init %q gateway %q terminal %v landlock %+v", plan.Target, plan.Init, plan.GatewaySocket, plan.Terminal, plan.Landlock)
	}
	if plan.Limits == nil || plan.Limits.MemoryBytes == 0 || plan.CgroupsPath != "" {
		t.Errorf("limits %+v cgroup %q: the kubelet applies the limits", plan.Limits, plan.CgroupsPath)
	}
	if plan.LSM != podLSM() {
		t.Errorf("lsm %+v, want %+v", plan.LSM, podLSM())
	}
	id := plan.Identity
	if id.UID != AgentUID || id.GID != AgentGID || id.Home != AgentHome || id.Rootless || id.KeepUID != nil || id.GrantWorkspace || id.IDMap.Mode != IDEngine {
		t.Errorf("identity %+v: want the pod's fixed agent ids", id)
	}
	for _, r := range plan.Residuals {
		t.Errorf("residual %s (%s): no host-specific residual applies to a pod", r.Code, r.Reason)
	}
	for _, m := range plan.Mounts {
		if m.Kind == KindCover {
			t.Errorf("cover mount %+v: the pod's workspace is a volume, no host socket reaches it", m)
		}
	}
	// The same host planned for its own runtime has both residuals: the
	// difference is the target's, not the host's.
	h.EUID, h.EGID = 0, 0
	rt, err := Resolve(Policy{}, []string{"sh"}, h, Run{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range rt.Residuals {
		got[r.Code] = true
	}
	for _, want := range []string{"lsm-unavailable", "workspace-socket-after-launch"} {
		if !got[want] {
			t.Errorf("runtime plan lacks residual %s: %+v", want, rt.Residuals)
		}
	}
}
