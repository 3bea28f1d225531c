package policy

import (
	"fmt"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// resolveIdentity picks the agent's ids. The agent keeps the workspace
// owner's host ids (as Podman's keep-id does) so that its files come out
// owned by that user. A root-owned workspace is never handed to host root:
// the agent then maps into the run's unprivileged range and is granted the
// workspace for the run instead. Rootless, the agent is the invoking user.
func (r *resolver) resolveIdentity() error {
	owner, err := r.h.FS.Stat(r.plan.Workspace)
	if err != nil {
		return fmt.Errorf("stat workspace: %w", err)
	}
	id := Identity{UID: AgentUID, GID: AgentGID, User: AgentUser, Home: AgentHome, Rootless: r.h.EUID != 0}
	switch {
	case id.Rootless && r.h.RootlessSingle:
		id.UID, id.GID = 0, 0
		id.KeepUID, id.KeepGID = ptr(r.h.EUID), ptr(r.h.EGID)
		r.residual("agent-root-in-userns", "this user has no subordinate ids, so the sandbox has one id: the agent runs as root of its own user namespace (this user on the host, without capabilities); add subuid/subgid entries and install uidmap for an unprivileged agent uid")
	case id.Rootless:
		id.UID, id.GID = r.h.EUID, r.h.EGID
		id.KeepUID, id.KeepGID = ptr(r.h.EUID), ptr(r.h.EGID)
	case owner.UID != 0:
		id.UID, id.KeepUID = owner.UID, ptr(owner.UID)
		if owner.GID != 0 {
			id.GID, id.KeepGID = owner.GID, ptr(owner.GID)
		}
	default:
		id.GrantWorkspace = true
	}
	req := IDRequest{UID: id.UID, GID: id.GID, KeepUID: id.KeepUID, KeepGID: id.KeepGID, Rootless: id.Rootless}
	if id.UIDMappings, id.GIDMappings, err = r.h.MapIDs(req); err != nil {
		return fmt.Errorf("map ids: %w", err)
	}
	if err := checkNoHostRoot(id); err != nil {
		return err
	}
	id.Init = r.initIdentity(id)
	r.plan.Identity = id
	r.personalize()
	return nil
}

// ResidualInitSharesUID is the residual of a sandbox whose init runs as the
// agent (see InitIdentity).
const ResidualInitSharesUID = "init-shares-agent-uid"

// InitSharedProbes are the probes and host checks that report ALLOW when init
// shares the agent's uid: the residual names them.
var InitSharedProbes = []string{"prlimit-pid1-denied", "kill-pid1-denied", "host-init-uid-separate"}

// initIdentity splits init from the agent: uid and gid 0 of the user
// namespace with InitCaps, wherever 0 is mapped and is not the agent's own
// id. Where it is not (one id mapped, which is then the agent's), init runs
// as the agent without capabilities, and the residual says what that leaves.
func (r *resolver) initIdentity(id Identity) InitIdentity {
	_, uidMapped := hostID(id.UIDMappings, 0)
	_, gidMapped := hostID(id.GIDMappings, 0)
	if id.UID != 0 && id.GID != 0 && uidMapped && gidMapped {
		return InitIdentity{Split: true, UID: 0, GID: 0, Caps: append([]string(nil), InitCaps...)}
	}
	r.plan.Residuals = append(r.plan.Residuals, Residual{
		Code: ResidualInitSharesUID,
		Reason: "the sandbox has one id, so agentbox-init (PID 1) runs as the agent's uid: the agent can change init's resource limits (prlimit), " +
			"which can break the gateway bridge init serves, and signal it where Landlock does not scope signals; add subuid/subgid entries and install uidmap to run init under an id of its own",
		Probes: append([]string(nil), InitSharedProbes...),
	})
	return InitIdentity{UID: id.UID, GID: id.GID}
}

func ptr(v uint32) *uint32 { return &v }

// checkNoHostRoot is the planner's line of defence: no container id maps
// to host root, and the agent's own ids are mapped at all. spec's
// WithUserNamespace refuses a host-root map again when it renders the
// plan: defence in depth, so that neither a wrong plan nor a spec built
// without the planner runs the sandbox's ids as host root. This one comes
// first and names the file and the fix, since the maps come from the
// subordinate id ranges (userns) and a range that includes 0 is a host
// misconfiguration no flag can fix.
func checkNoHostRoot(id Identity) error {
	for _, kind := range []struct {
		name, file, flag string
		maps             []specs.LinuxIDMapping
	}{{"uid", "/etc/subuid", "subuids", id.UIDMappings}, {"gid", "/etc/subgid", "subgids", id.GIDMappings}} {
		for _, m := range kind.maps {
			if m.HostID == 0 {
				return hostRootRefusal(kind.name, kind.file, kind.flag, m, id.Rootless)
			}
		}
	}
	if _, ok := id.AgentHostUID(); !ok {
		return fmt.Errorf("agent uid %d is not mapped", id.UID)
	}
	if _, ok := id.AgentHostGID(); !ok {
		return fmt.Errorf("agent gid %d is not mapped", id.GID)
	}
	return nil
}

// hostRootRefusal says which map reaches host root, from which file, and
// how to move the range above the host's own ids.
func hostRootRefusal(name, file, flag string, m specs.LinuxIDMapping, rootless bool) *RefusedError {
	owner, entry := "agentbox", "agentbox's entry in "+file
	if rootless {
		owner, entry = "$USER", "your entry in "+file
	}
	return &RefusedError{
		What: fmt.Sprintf("the sandbox's %s map %d→%d (%d ids) would make sandbox %s %d host root: the subordinate ids it was cut from (%s) include %s 0",
			name, m.ContainerID, m.HostID, m.Size, name, m.ContainerID, entry, name),
		Fix: fmt.Sprintf("give that entry a range above every id the host uses, for example: usermod --del-%s 0-%d --add-%s 200000-265535 %s",
			flag, m.Size-1, flag, owner),
	}
}

// personalize writes the identity into the synthesized files and the
// fresh home's tmpfs options.
func (r *resolver) personalize() {
	id := r.plan.Identity
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/usr/sbin/nologin\n%s:x:%d:%d:agentbox agent:%s:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", id.User, id.UID, id.GID, id.Home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\nnogroup:x:65534:\n", id.User, id.GID)
	if id.UID == 0 || id.UID == 65534 {
		passwd = strings.Replace(passwd, "root:x:0:0:root:/root:/usr/sbin/nologin\n", "", 1)
	}
	for name, content := range map[string]string{"/etc/passwd": passwd, "/etc/group": group} {
		if _, ok := r.plan.Rootfs.Files[name]; ok {
			r.plan.Rootfs.Files[name] = content
		}
	}
	for i, m := range r.plan.Mounts {
		if m.Kind == KindTmpfs && m.Destination == AgentHome {
			r.plan.Mounts[i].Options = append(m.Options, fmt.Sprintf("uid=%d", id.UID), fmt.Sprintf("gid=%d", id.GID))
		}
	}
}
