package check

import (
	"fmt"
	"strings"

	"github.com/agentbox/agentbox/audit"
)

// composeFixes say, per finding code, the change to a compose service that
// removes the finding. %[1]s is the service, %[2]s the finding's subject.
var composeFixes = map[string]string{
	audit.CodeContainerSocket: "remove the bind of %[2]s from services.%[1]s.volumes (and any DOCKER_HOST-style variable): an agent never needs the engine's API",
	audit.CodeHostRoot:        "remove the bind %[2]s from services.%[1]s.volumes; bind only the workspace",
	audit.CodeHomeDirectory:   "remove the bind %[2]s from services.%[1]s.volumes; the agent gets a fresh HOME as tmpfs (tmpfs: [\"/home/agent:uid=1000,gid=1000,mode=0700\"])",
	audit.CodeSystemDirectory: "remove the bind %[2]s from services.%[1]s.volumes; the image provides the system directories",
	audit.CodeExtraWritable:   "make the bind %[2]s read_only: true, or remove it from services.%[1]s.volumes (declare the real workspace with --workspace)",
	audit.CodeSecretInEnv:     "remove %[2]s from services.%[1]s.environment; give the real key to the gateway as a Docker secret and the agent only the per-sandbox AGENT_GATEWAY_KEY (agentbox compose writes both)",
	audit.CodeHostNetwork:     "remove network_mode: host from services.%[1]s and set networks: [sandbox], with networks.sandbox.internal: true",
	audit.CodeNetworkPolicy:   "attach services.%[1]s only to internal networks: remove %[2]s from its networks, or set networks.%[2]s.internal: true; the gateway is the only service on a network with a way out",
	audit.CodeRunsAsRoot:      "set services.%[1]s.user: \"1000:1000\" (an unprivileged uid:gid, the workspace owner's)",
	audit.CodePrivileged:      "remove privileged: true from services.%[1]s",
	audit.CodeWritableRoot:    "set services.%[1]s.read_only: true, with tmpfs: [/tmp, HOME] for the paths the agent writes",
	audit.CodeCapsAdded:       "remove %[2]s from services.%[1]s.cap_add",
	audit.CodeCapsNotDropped:  "set services.%[1]s.cap_drop: [ALL]",
	audit.CodeInitCaps:        "set services.%[1]s.cap_drop: [ALL]: only agentbox's own sandbox has the init that drops them for its children",
	audit.CodeNewPrivileges:   "add \"no-new-privileges:true\" to services.%[1]s.security_opt",
	audit.CodeNoLimits:        "set services.%[1]s.mem_limit (and memswap_limit to the same value) and pids_limit, for example mem_limit: 4g, pids_limit: 512",
	audit.CodeSeccompUnconfined: "set \"seccomp=/abs/path/agentbox-seccomp.json\" in services.%[1]s.security_opt " +
		"(agentbox compose writes the profile); never seccomp=unconfined",
	audit.CodeSeccompWeak: "use agentbox's profile in services.%[1]s.security_opt: seccomp=/abs/path/agentbox-seccomp.json (agentbox compose writes it)",
	audit.CodeAppArmor:    "remove apparmor=unconfined from services.%[1]s.security_opt (or name agentbox's profile: apparmor=agentbox-default)",
	audit.CodeSELinux:     "remove the label:disable or type:spc_t option from services.%[1]s.security_opt",
	audit.CodeProcMasks:   "remove systempaths=unconfined from services.%[1]s.security_opt",
	audit.CodeHostPID:     "remove pid: host from services.%[1]s",
	audit.CodeHostIPC:     "remove ipc: host from services.%[1]s",
	audit.CodeHostUTS:     "remove uts: host from services.%[1]s",
	audit.CodeDevices:     "remove %[2]s from services.%[1]s.devices (and device_cgroup_rules)",
	audit.CodeSysctls:     "remove %[2]s from services.%[1]s.sysctls",
	audit.CodeNoUserNS:    "Podman: set services.%[1]s.userns_mode: keep-id (or auto); Docker: start the daemon with userns-remap (a daemon-wide setting, see dockerd --userns-remap)",
	audit.CodeAutoApprove: "remove %[2]s from services.%[1]s (command, environment or the agent's settings file): the agent asks before it acts",

	// No compose key names the runtime release: only upgrading it helps.
	audit.CodeRuntimeVulnerable: "upgrade the engine's OCI runtime as the finding says (%[2]s): no change to services.%[1]s removes it",
	// Only a Kubernetes pod has a service-account token (docs/kube.md).
	audit.CodeServiceAccountToken: "set automountServiceAccountToken: false on the pod of %[1]s: no compose service mounts one",
	// Only a dedicated user account has these (agentbox audit --user,
	// docs/dedicated-user.md): no compose key grants or removes them.
	audit.CodeHomeReadable:    "remove the account's read access to %[2]s (chmod o-rwx, setfacl -x, or its group): no change to services.%[1]s removes it",
	audit.CodeCredReadable:    "remove the account's read access to %[2]s (chmod 600, setfacl -x): no change to services.%[1]s removes it",
	audit.CodePrivilegedGroup: "take the account out of the group (gpasswd -d ACCOUNT GROUP): no change to services.%[1]s removes it",
	audit.CodeSudoRights:      "remove the account's sudoers lines (%[2]s): no change to services.%[1]s removes it",
}

// Fix is the change to a compose service that removes f, or the catalog's
// fix for codes without a compose-specific one.
func Fix(f audit.Finding, service string) string {
	if t, ok := composeFixes[f.Code]; ok {
		return fmt.Sprintf(t, service, fixSubject(f))
	}
	return f.Fix
}

// fixSubject trims a subject to what the change names: the host side of a
// mount, a capability list, a network name.
func fixSubject(f audit.Finding) string {
	s := f.Subject
	if host, _, ok := strings.Cut(s, " -> "); ok {
		s = host
	}
	return s
}
