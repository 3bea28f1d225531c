package policy

import (
	"fmt"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// resolveIdentity picks the agent's ids and how the user namespace maps
// them (IDMap.Mode). The agent keeps the workspace owner's host ids (as
// Podman's keep-id does) so that its files come out owned by that user. A
// root-owned workspace is never handed to host root: the agent then maps
// into the run's unprivileged slot and is granted the workspace for the run
// instead. Rootless, the agent is the invoking user, or root of its own user
// namespace when the user's own ids are the only ones (IDSingle). The maps
// themselves are made after planning (MapIDs), once the run's slot is
// leased.
func (r *resolver) resolveIdentity() error {
	if r.kubernetes() {
		return r.podIdentity()
	}
	if r.user() {
		return r.userIdentity()
	}
	owner, err := r.h.FS.Stat(r.plan.Workspace)
	if err != nil {
		return fmt.Errorf("stat workspace: %w", err)
	}
	id := Identity{UID: AgentUID, GID: AgentGID, User: AgentUser, Home: AgentHome, Rootless: r.h.EUID != 0}
	id.IDMap = r.idMap(id.Rootless)
	switch {
	case id.IDMap.Mode == IDSingle:
		id.UID, id.GID = 0, 0
		id.KeepUID, id.KeepGID = ptr(r.h.EUID), ptr(r.h.EGID)
	case id.Rootless:
		id.UID, id.GID = r.h.EUID, r.h.EGID
		id.KeepUID, id.KeepGID = ptr(r.h.EUID), ptr(r.h.EGID)
	case owner.UID != 0:
		id.UID, id.KeepUID = owner.UID, ptr(owner.UID)
		if owner.GID != 0 {
			id.GID, id.KeepGID = owner.GID, ptr(owner.GID)
		}
	default:
		id.GrantWorkspace = true // under runsc by chown, not ACLs (engine.GrantChown)
	}
	if err := r.checkSubIDs(id); err != nil {
		return err
	}
	id.Init = r.initIdentity(id)
	r.plan.Identity = id
	r.personalize()
	return nil
}

// idMap decides how the sandbox's ids map to the host's: a slot leased
// for the run as root; rootless, RootlessIDMap; a container engine maps
// them itself.
func (r *resolver) idMap(rootless bool) IDMap {
	switch {
	case r.engine():
		return IDMap{Mode: IDEngine}
	case !rootless:
		return IDMap{Mode: IDSlot}
	}
	m, res := RootlessIDMap(r.h.SubIDs)
	if res != nil {
		r.plan.Residuals = append(r.plan.Residuals, *res)
	}
	return m
}

// RootlessIDMap decides, once for the plan and for doctor, how a rootless
// sandbox's ids map: onto the user's subordinate ranges where it has both
// and newuidmap/newgidmap are installed, else its own ids only, with the
// one residual that says what that leaves and how to fix it (nil in the
// first case).
func RootlessIDMap(sub SubIDs) (IDMap, *Residual) {
	if sub.UID.Count > 0 && sub.GID.Count > 0 && sub.NewIDMap {
		return IDMap{Mode: IDSubIDs, UIDs: sub.UID, GIDs: sub.GID}, nil
	}
	return IDMap{Mode: IDSingle}, &Residual{
		Code: ResidualRootlessSingle,
		Reason: rootlessSingleWhy(sub) + ", so the sandbox has one id: the agent runs as root of its own user namespace (this user on the host, without capabilities), " +
			"and agentbox-init (PID 1) runs as the same uid, so the agent can change init's resource limits (prlimit), which can break the gateway bridge init serves, " +
			"and signal it where Landlock does not scope signals; " + rootlessSingleFix(sub),
		Probes: append([]string(nil), InitSharedProbes...),
	}
}

func rootlessSingleWhy(sub SubIDs) string {
	if sub.UID.Count == 0 || sub.GID.Count == 0 {
		return fmt.Sprintf("user %s has no entry in /etc/subuid and /etc/subgid", userOrYou(sub.User))
	}
	return "newuidmap/newgidmap are not installed"
}

func rootlessSingleFix(sub SubIDs) string {
	if sub.UID.Count == 0 || sub.GID.Count == 0 {
		return fmt.Sprintf("for an unprivileged agent uid and an init of its own: usermod --add-subuids 200000-265535 --add-subgids 200000-265535 %s, and apt-get install uidmap", userOrYou(sub.User))
	}
	return "for an unprivileged agent uid and an init of its own: apt-get install uidmap"
}

func userOrYou(name string) string {
	if name == "" {
		return "$USER"
	}
	return name
}

// ResidualRootlessSingle is the residual of a rootless sandbox with one id
// (IDSingle): the agent is root of its user namespace, and init runs as the
// agent (see InitIdentity). It names InitSharedProbes.
const ResidualRootlessSingle = "rootless-single-id"

// InitSharedProbes are the probes and host checks that report ALLOW when init
// shares the agent's uid: the residual names them.
var InitSharedProbes = []string{"prlimit-pid1-denied", "kill-pid1-denied", "host-init-uid-separate"}

// initIdentity splits init from the agent: uid and gid 0 of the user
// namespace with InitCaps, wherever the map has more ids than the agent's
// (a slot, or subordinate ranges, both of which map 0) and 0 is not the
// agent's own id. Where it has one id, which is then the agent's, init runs
// as the agent without capabilities; the residual of IDSingle says what
// that leaves. A container engine's sandbox has no agentbox-init.
func (r *resolver) initIdentity(id Identity) InitIdentity {
	many := id.IDMap.Mode == IDSlot || id.IDMap.Mode == IDSubIDs
	if many && id.UID != 0 && id.GID != 0 {
		return InitIdentity{Split: true, UID: 0, GID: 0, Caps: append([]string(nil), InitCaps...)}
	}
	return InitIdentity{UID: id.UID, GID: id.GID}
}

// checkSubIDs refuses, at planning, subordinate ranges that include host
// id 0: every map cut from them would reach host root.
func (r *resolver) checkSubIDs(id Identity) error {
	m := id.IDMap
	if m.Mode != IDSubIDs {
		return nil
	}
	if m.UIDs.Start == 0 {
		return hostRootRefusal("uid", "/etc/subuid", "subuids", specs.LinuxIDMapping{HostID: 0, Size: m.UIDs.Count}, true)
	}
	if m.GIDs.Start == 0 {
		return hostRootRefusal("gid", "/etc/subgid", "subgids", specs.LinuxIDMapping{HostID: 0, Size: m.GIDs.Count}, true)
	}
	return nil
}

func ptr(v uint32) *uint32 { return &v }

// CheckMappings is the planner's line of defence over the maps made from
// the plan's request after planning (the launcher's, from the leased slot
// or the subordinate ranges): no container id maps to host root, the
// agent's own ids are mapped, and a split init's 0 is. spec's
// WithUserNamespace refuses a host-root map again when it renders:
// defence in depth, so that neither a wrong map nor a spec built without
// the planner runs the sandbox's ids as host root. This one comes first and
// names the file and the fix, since the maps come from the subordinate id
// ranges (userns) and a range that includes 0 is a host misconfiguration
// no flag can fix.
func (id Identity) CheckMappings(uids, gids []specs.LinuxIDMapping) error {
	for _, kind := range []struct {
		name, file, flag string
		maps             []specs.LinuxIDMapping
	}{{"uid", "/etc/subuid", "subuids", uids}, {"gid", "/etc/subgid", "subgids", gids}} {
		for _, m := range kind.maps {
			if m.HostID == 0 {
				return hostRootRefusal(kind.name, kind.file, kind.flag, m, id.Rootless)
			}
		}
	}
	for _, want := range []struct {
		name        string
		maps        []specs.LinuxIDMapping
		agent, init uint32
	}{{"uid", uids, id.UID, id.Init.UID}, {"gid", gids, id.GID, id.Init.GID}} {
		if _, ok := HostID(want.maps, want.agent); !ok {
			return fmt.Errorf("agent %s %d is not mapped", want.name, want.agent)
		}
		if _, ok := HostID(want.maps, want.init); id.Init.Split && !ok {
			return fmt.Errorf("init's %s %d is not mapped", want.name, want.init)
		}
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
