package policy

// TargetKubernetes is a cluster running the sandbox as a pod (agentbox kube).
// What a pod gives, decided here rather than patched by the renderer:
//
//   - the node's runtime and kubelet bring the runtime, the init and the
//     limits, as an engine's daemon does (nothing is looked up or vetted on
//     this host, no agentbox-init, no gateway socket bound: the gateway is
//     a pod of its own, reached over the cluster network);
//   - the ids are the pod's, not this host's: the agent's fixed uid and gid
//     (AgentUID, AgentGID) inside a user namespace of the node
//     (hostUsers: false), never the workspace owner's host ids;
//   - the workspace is a volume of the pod (an emptyDir), so no socket or
//     protected file of this host's workspace reaches it: nothing is
//     covered and no workspace-socket-after-launch residual applies;
//   - the LSM is the node's: this host's AppArmor and SELinux facts say
//     nothing about it, so no lsm-unavailable residual either. The plan
//     names agentbox's AppArmor profile; the renderer uses it as the pod's
//     Localhost profile when it installs the profiles on the nodes, and the
//     runtime's default profile (with a residual of its own) otherwise;
//   - no terminal (kubectl attach gives one).
const TargetKubernetes Target = "kubernetes"

// kubernetes reports whether a cluster runs the sandbox as a pod.
func (r *resolver) kubernetes() bool { return r.run.Target == TargetKubernetes }

// podIdentity is the agent's identity in a pod: the fixed agent ids, its
// home, no id of this host kept, no workspace grant (the pod's fsGroup owns
// the volume). The node maps the ids (IDEngine: not agentbox's map).
func (r *resolver) podIdentity() error {
	r.plan.Identity = Identity{UID: AgentUID, GID: AgentGID, User: AgentUser, Home: AgentHome, IDMap: IDMap{Mode: IDEngine}}
	r.plan.Identity.Init = InitIdentity{UID: AgentUID, GID: AgentGID}
	r.personalize()
	return nil
}

// podLSM is the LSM a pod's plan names: agentbox's AppArmor profile, which
// the node enforces when it has it (see TargetKubernetes).
func podLSM() LSM { return LSM{Kind: LSMAppArmor, AppArmorProfile: AppArmorProfile} }
