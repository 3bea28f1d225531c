package audit

import (
	"sort"

	"github.com/agentbox/agentbox/policy"
)

// Severity ranks a finding. Info findings never fail an audit.
type Severity string

// The severities, most severe first.
const (
	Critical Severity = "critical"
	High     Severity = "high"
	Medium   Severity = "medium"
	Low      Severity = "low"
	Info     Severity = "info"
)

// rank orders severities for sorting: lower is more severe.
func (s Severity) rank() int {
	switch s {
	case Critical:
		return 0
	case High:
		return 1
	case Medium:
		return 2
	case Low:
		return 3
	default:
		// Info and unknown severities sort last, below
	}
	return 4
}

// Rule is one entry of the finding catalog.
type Rule struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	// Title is one line saying what is wrong.
	Title string `json:"title"`
	// Symptom is what a user sees when the fault is used.
	Symptom string `json:"symptom"`
	// Fix is the single change that removes the fault.
	Fix string `json:"fix"`
	// Probe is the agentbox self-test probe that proves the fix; empty when
	// no probe observes the fault from inside (agentbox audit re-checks it).
	Probe string `json:"probe,omitempty"`
	// Residual is what remains after the fix.
	Residual string `json:"residual"`
}

// The finding codes. They are stable: tools and accepted residuals name them.
// The path classes' codes are policy's, whose ClassifyBind decides them for
// the planner and the audit alike.
const (
	CodeContainerSocket   = policy.CodeSocket   // "container-socket-mounted"
	CodeHostRoot          = policy.CodeHostRoot // "host-root-mounted"
	CodeHomeDirectory     = policy.CodeHome     // "home-directory-mounted"
	CodeSystemDirectory   = policy.CodeSystem   // "system-directory-mounted"
	CodeExtraWritable     = "extra-writable-mount"
	CodeSecretInEnv       = "secret-in-environment"
	CodeHostNetwork       = "host-network-mode"
	CodeNetworkPolicy     = "network-policy-not-applied"
	CodeRunsAsRoot        = "runs-as-root"
	CodePrivileged        = "privileged-container"
	CodeWritableRoot      = "writable-root-filesystem"
	CodeCapsAdded         = "capabilities-added"
	CodeCapsNotDropped    = "capabilities-not-dropped"
	CodeInitCaps          = "init-capabilities"
	CodeNewPrivileges     = "new-privileges-allowed"
	CodeNoLimits          = "no-resource-limits"
	CodeSeccompUnconfined = "seccomp-unconfined"
	CodeSeccompWeak       = "seccomp-profile-weak"
	CodeAppArmor          = "apparmor-unconfined"
	CodeSELinux           = "selinux-unconfined"
	CodeProcMasks         = "proc-masks-removed"
	CodeHostPID           = "host-pid-mode"
	CodeHostIPC           = "host-ipc-mode"
	CodeHostUTS           = "host-uts-mode"
	CodeNoUserNS          = policy.CodeNoUserNS // "user-namespace-not-used"
	CodeDevices           = "devices-mounted"
	CodeSysctls           = "sysctls-set"
	CodeAutoApprove       = "auto-approve-permission-mode"
	CodeRuntimeVulnerable = "runtime-vulnerable"
	// CodeServiceAccountToken is Kubernetes': the pod holds an API token.
	CodeServiceAccountToken = "service-account-token-mounted"
)

var catalog = map[string]Rule{
	CodeContainerSocket: {
		Code: CodeContainerSocket, Severity: Critical,
		Title:    "a container engine socket (or the directory holding one) is reachable from inside",
		Symptom:  "the agent starts its own containers: with the host's root filesystem bound in, privileged, outside every limit set here",
		Fix:      policy.PathFixes[policy.CodeSocket],
		Probe:    "container-socket-absent",
		Residual: "none for the engine; a socket proxy that filters the API is still an engine",
	},
	CodeHostRoot: {
		Code: CodeHostRoot, Severity: Critical,
		Title:    "the host's root filesystem is bound into the container",
		Symptom:  "the agent reads and changes any host file: keys, other users' homes, /etc",
		Fix:      policy.PathFixes[policy.CodeHostRoot],
		Probe:    "planted-secret-unreadable",
		Residual: "none",
	},
	CodeHomeDirectory: {
		Code: CodeHomeDirectory, Severity: High,
		Title:    "a home directory, or something inside one (~/.ssh, ~/.aws, dotfiles), is bound in; read-only does not help",
		Symptom:  "the agent changed a file in your home directory, or read your SSH keys and cloud credentials",
		Fix:      policy.PathFixes[policy.CodeHome],
		Probe:    "host-home-not-mounted",
		Residual: "the workspace itself is still shared; keep secrets out of it",
	},
	CodeSystemDirectory: {
		Code: CodeSystemDirectory, Severity: High,
		Title:    "a host system directory (/etc, /var, /run, /proc, /sys, /dev, /boot …) is bound in",
		Symptom:  "the agent reads host configuration and runtime state, or changes it when the bind is writable",
		Fix:      policy.PathFixes[policy.CodeSystem],
		Probe:    "planted-secret-unreadable",
		Residual: "whatever single file is still bound read-only",
	},
	CodeExtraWritable: {
		Code: CodeExtraWritable, Severity: Medium,
		Title:    "a read-write mount other than the declared workspace",
		Symptom:  "the agent's changes persist outside the workspace, where nobody reviews them",
		Fix:      "make the mount read-only, or drop it; declare the workspace with --workspace",
		Residual: "the workspace stays writable by design",
	},
	CodeSecretInEnv: {
		Code: CodeSecretInEnv, Severity: High,
		Title:    "a credential-named environment variable is passed in (the value is not shown)",
		Symptom:  "the agent, or anything it runs, sends your token to wherever it likes",
		Fix:      "remove the variable; let the agentbox gateway inject the key outside the sandbox",
		Probe:    "environment-is-clean",
		Residual: "the gateway's own per-run token, which is worthless outside this run",
	},
	CodeHostNetwork: {
		Code: CodeHostNetwork, Severity: Critical,
		Title:    "the container shares the host's network namespace",
		Symptom:  "the agent reaches the internet, the host's loopback services and the cloud metadata endpoint",
		Fix:      "remove network_mode: host / --network host; attach an internal network with the gateway on it",
		Probe:    "internet-unreachable",
		Residual: "the gateway's allowlist",
	},
	CodeNetworkPolicy: {
		Code: CodeNetworkPolicy, Severity: High,
		Title:    "the container is on a network that is not internal (or whose internal flag cannot be read)",
		Symptom:  "the agent reaches the internet directly, around any gateway or allowlist",
		Fix:      "attach only networks with internal: true and route model traffic through the agentbox gateway",
		Probe:    "internet-unreachable",
		Residual: "the gateway's allowlist",
	},
	CodeRunsAsRoot: {
		Code: CodeRunsAsRoot, Severity: High,
		Title:    "the process runs as uid 0 without a user namespace",
		Symptom:  "a container escape, or any writable host bind, is host root",
		Fix:      "set user: \"1000:1000\" (or --user), or run under a user namespace",
		Probe:    "uid-map-non-identity",
		Residual: "the unprivileged uid still owns what it writes to binds",
	},
	CodePrivileged: {
		Code: CodePrivileged, Severity: Critical,
		Title:    "the container is privileged: every capability, every device, no seccomp, no LSM",
		Symptom:  "the agent mounts the host disk and loads kernel modules",
		Fix:      "remove privileged: true / --privileged; add back the one capability actually needed, if any",
		Probe:    "capabilities-zero",
		Residual: "none",
	},
	CodeWritableRoot: {
		Code: CodeWritableRoot, Severity: Medium,
		Title:    "the root filesystem is writable",
		Symptom:  "the agent modifies the image's binaries and libraries for later commands",
		Fix:      "set read_only: true / --read-only and give writable tmpfs only where needed",
		Residual: "tmpfs mounts stay writable for the life of the run",
	},
	CodeCapsAdded: {
		Code: CodeCapsAdded, Severity: High,
		Title:    "capabilities are added beyond the engine's default set",
		Symptom:  "the agent uses kernel powers (mount, raw network, ptrace …) that containers normally lack",
		Fix:      "remove cap_add / --cap-add",
		Probe:    "capabilities-zero",
		Residual: "none",
	},
	CodeCapsNotDropped: {
		Code: CodeCapsNotDropped, Severity: Medium,
		Title:    "the engine's default capabilities are kept (cap_drop: [ALL] is missing)",
		Symptom:  "the agent chowns files, binds low ports, forges packets with NET_RAW",
		Fix:      "add cap_drop: [ALL] / --cap-drop ALL",
		Probe:    "capabilities-zero",
		Residual: "none",
	},
	CodeInitCaps: {
		Code: CodeInitCaps, Severity: Info,
		Title:    "the container's init holds capabilities only to start its children under another, unprivileged uid, which drop them before they execute anything",
		Symptom:  "none while the init does what it claims: the probe capabilities-zero checks the agent's own sets from inside, and host-capabilities from the host",
		Fix:      "nothing to change for agentbox-init; any other init must drop them (cap_drop: [ALL])",
		Probe:    "capabilities-zero",
		Residual: "init itself keeps CAP_KILL for the run, to forward signals to the agent, a uid not its own",
	},
	CodeNewPrivileges: {
		Code: CodeNewPrivileges, Severity: Medium,
		Title:    "no-new-privileges is not set",
		Symptom:  "a setuid binary in the image turns the agent into root",
		Fix:      "add security_opt: [no-new-privileges:true] / --security-opt no-new-privileges",
		Probe:    "no-new-privs",
		Residual: "none",
	},
	CodeNoLimits: {
		Code: CodeNoLimits, Severity: Medium,
		Title:    "no memory or pids limit",
		Symptom:  "a runaway agent or a fork bomb takes the host down",
		Fix:      "set mem_limit and pids_limit (or --memory and --pids-limit)",
		Residual: "CPU time, unless a CPU limit is set too",
	},
	CodeSeccompUnconfined: {
		Code: CodeSeccompUnconfined, Severity: High,
		Title:    "seccomp is disabled",
		Symptom:  "the agent calls every syscall the kernel has: mount, bpf, keyctl, io_uring, kexec",
		Fix:      "remove seccomp=unconfined; use the engine default or agentbox's profile",
		Probe:    "seccomp-filter",
		Residual: "bugs in the syscalls that remain allowed",
	},
	CodeSeccompWeak: {
		Code: CodeSeccompWeak, Severity: High,
		Title:    "a custom seccomp profile allows syscalls that agentbox's profile denies",
		Symptom:  "the agent reaches kernel surfaces (io_uring, bpf, userfaultfd, perf …) that agentbox keeps closed",
		Fix:      "deny the listed syscalls in the profile, or use agentbox's profile",
		Probe:    "seccomp-filter",
		Residual: "bugs in the syscalls that remain allowed",
	},
	CodeAppArmor: {
		Code: CodeAppArmor, Severity: Medium,
		Title:    "AppArmor confinement is disabled",
		Symptom:  "nothing stops the agent writing /proc and /sys files that the profile would deny",
		Fix:      "remove apparmor=unconfined; keep the engine's default profile",
		Residual: "none",
	},
	CodeSELinux: {
		Code: CodeSELinux, Severity: Medium,
		Title:    "SELinux separation is disabled (label=disable or an unconfined type)",
		Symptom:  "the agent's process carries a label that may touch any host file",
		Fix:      "remove label=disable / label=type:spc_t",
		Residual: "none",
	},
	CodeProcMasks: {
		Code: CodeProcMasks, Severity: High,
		Title:    "/proc and /sys paths that engines mask or make read-only are exposed",
		Symptom:  "the agent reads kernel memory maps and keys, or writes /proc/sysrq-trigger",
		Fix:      "remove systempaths=unconfined; keep the engine's masked and read-only paths",
		Probe:    "proc-keys-unreadable",
		Residual: "none",
	},
	CodeHostPID: {
		Code: CodeHostPID, Severity: High,
		Title:    "the container shares the host's PID namespace",
		Symptom:  "the agent sees and signals every host process and reads their environments",
		Fix:      "remove pid: host / --pid host",
		Probe:    "host-pids-invisible",
		Residual: "none",
	},
	CodeHostIPC: {
		Code: CodeHostIPC, Severity: High,
		Title:    "the container shares the host's IPC namespace",
		Symptom:  "the agent reads host shared memory segments",
		Fix:      "remove ipc: host / --ipc host",
		Residual: "none",
	},
	CodeHostUTS: {
		Code: CodeHostUTS, Severity: Low,
		Title:    "the container shares the host's UTS namespace",
		Symptom:  "the agent changes the host's hostname",
		Fix:      "remove uts: host / --uts host",
		Residual: "none",
	},
	CodeNoUserNS: {
		Code: CodeNoUserNS, Severity: Info,
		Title:    "the container has no user namespace: its uids are host uids",
		Symptom:  "files the agent writes to binds belong to a real host uid, and an escape keeps that uid",
		Fix:      "run under a user namespace (agentbox run, podman --userns=auto, dockerd --userns-remap)",
		Probe:    "uid-map-non-identity",
		Residual: "none",
	},
	CodeDevices: {
		Code: CodeDevices, Severity: High,
		Title:    "host devices are made available (devices, device cgroup rules)",
		Symptom:  "the agent reads or writes raw disks, the GPU or /dev/kvm",
		Fix:      "remove devices / --device and device_cgroup_rules",
		Probe:    "device-nodes-minimal",
		Residual: "none",
	},
	CodeSysctls: {
		Code: CodeSysctls, Severity: Low,
		Title:    "kernel parameters are changed for the container",
		Symptom:  "the sandbox's network or IPC behaves unlike the audited default",
		Fix:      "remove sysctls unless each one is justified",
		Residual: "none",
	},
	CodeRuntimeVulnerable: {
		Code: CodeRuntimeVulnerable, Severity: High,
		Title:    "the OCI runtime that starts the container has a known vulnerability that this way of launching exposes",
		Symptom:  "the agent breaks out through the runtime while the sandbox is set up (a procfs file bound read-write, a masked path left open), whatever the spec says",
		Fix:      "install the runtime release or distribution package the finding names, or launch in a mode the vulnerability needs and this one lacks (agentbox doctor lists them per mode)",
		Residual: "vulnerabilities published after the advisory table's checked date",
	},
	CodeServiceAccountToken: {
		Code: CodeServiceAccountToken, Severity: High,
		Title:    "a Kubernetes service-account token is mounted into the pod",
		Symptom:  "the agent calls the cluster's API server with the pod's identity: lists secrets, starts pods, wherever RBAC lets it",
		Fix:      "set automountServiceAccountToken: false on the pod (and on its ServiceAccount)",
		Residual: "none",
	},
	CodeAutoApprove: {
		Code: CodeAutoApprove, Severity: Info,
		Title:    "the agent is set to act without asking (auto-approve, yolo, bypass permissions)",
		Symptom:  "nobody is asked before the agent uses any other fault found here",
		Fix:      "fix the other findings first; then auto-approve runs inside a boundary that holds",
		Residual: "the agent acts without review inside the sandbox, by design",
	},
}

// Catalog returns every rule of the finding catalog, sorted by code.
func Catalog() []Rule {
	rules := make([]Rule, 0, len(catalog))
	for _, r := range catalog {
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].Code < rules[j].Code })
	return rules
}
