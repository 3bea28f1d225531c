package audit

import "sort"

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
const (
	CodeContainerSocket   = "container-socket-mounted"
	CodeHostRoot          = "host-root-mounted"
	CodeHomeDirectory     = "home-directory-mounted"
	CodeSystemDirectory   = "system-directory-mounted"
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
	CodeNoUserNS          = "user-namespace-not-used"
	CodeDevices           = "devices-mounted"
	CodeSysctls           = "sysctls-set"
	CodeAutoApprove       = "auto-approve-permission-mode"
)

var catalog = map[string]Rule{
	CodeContainerSocket: {
		CodeContainerSocket, Critical,
		"a container engine socket (or the directory holding one) is reachable from inside",
		"the agent starts its own containers: with the host's root filesystem bound in, privileged, outside every limit set here",
		"remove the socket bind (and use_api_socket, DOCKER_HOST); give the agent the agentbox gateway instead of an engine",
		"container-socket-absent",
		"none for the engine; a socket proxy that filters the API is still an engine",
	},
	CodeHostRoot: {
		CodeHostRoot, Critical,
		"the host's root filesystem is bound into the container",
		"the agent reads and changes any host file: keys, other users' homes, /etc",
		"remove the bind of /; bind only the workspace",
		"planted-secret-unreadable",
		"none",
	},
	CodeHomeDirectory: {
		CodeHomeDirectory, High,
		"a home directory, or something inside one (~/.ssh, ~/.aws, dotfiles), is bound in; read-only does not help",
		"the agent changed a file in your home directory, or read your SSH keys and cloud credentials",
		"remove the bind; bind only the project directory and give the agent a fresh HOME",
		"host-home-not-mounted",
		"the workspace itself is still shared; keep secrets out of it",
	},
	CodeSystemDirectory: {
		CodeSystemDirectory, High,
		"a host system directory (/etc, /var, /run, /proc, /sys, /dev, /boot …) is bound in",
		"the agent reads host configuration and runtime state, or changes it when the bind is writable",
		"remove the bind; if one file is needed, bind that file read-only",
		"planted-secret-unreadable",
		"whatever single file is still bound read-only",
	},
	CodeExtraWritable: {
		CodeExtraWritable, Medium,
		"a read-write mount other than the declared workspace",
		"the agent's changes persist outside the workspace, where nobody reviews them",
		"make the mount read-only, or drop it; declare the workspace with --workspace",
		"",
		"the workspace stays writable by design",
	},
	CodeSecretInEnv: {
		CodeSecretInEnv, High,
		"a credential-named environment variable is passed in (the value is not shown)",
		"the agent, or anything it runs, sends your token to wherever it likes",
		"remove the variable; let the agentbox gateway inject the key outside the sandbox",
		"environment-is-clean",
		"the gateway's own per-run token, which is worthless outside this run",
	},
	CodeHostNetwork: {
		CodeHostNetwork, Critical,
		"the container shares the host's network namespace",
		"the agent reaches the internet, the host's loopback services and the cloud metadata endpoint",
		"remove network_mode: host / --network host; attach an internal network with the gateway on it",
		"internet-unreachable",
		"the gateway's allowlist",
	},
	CodeNetworkPolicy: {
		CodeNetworkPolicy, High,
		"the container is on a network that is not internal (or whose internal flag cannot be read)",
		"the agent reaches the internet directly, around any gateway or allowlist",
		"attach only networks with internal: true and route model traffic through the agentbox gateway",
		"internet-unreachable",
		"the gateway's allowlist",
	},
	CodeRunsAsRoot: {
		CodeRunsAsRoot, High,
		"the process runs as uid 0 without a user namespace",
		"a container escape, or any writable host bind, is host root",
		"set user: \"1000:1000\" (or --user), or run under a user namespace",
		"uid-map-non-identity",
		"the unprivileged uid still owns what it writes to binds",
	},
	CodePrivileged: {
		CodePrivileged, Critical,
		"the container is privileged: every capability, every device, no seccomp, no LSM",
		"the agent mounts the host disk and loads kernel modules",
		"remove privileged: true / --privileged; add back the one capability actually needed, if any",
		"capabilities-zero",
		"none",
	},
	CodeWritableRoot: {
		CodeWritableRoot, Medium,
		"the root filesystem is writable",
		"the agent modifies the image's binaries and libraries for later commands",
		"set read_only: true / --read-only and give writable tmpfs only where needed",
		"",
		"tmpfs mounts stay writable for the life of the run",
	},
	CodeCapsAdded: {
		CodeCapsAdded, High,
		"capabilities are added beyond the engine's default set",
		"the agent uses kernel powers (mount, raw network, ptrace …) that containers normally lack",
		"remove cap_add / --cap-add",
		"capabilities-zero",
		"none",
	},
	CodeCapsNotDropped: {
		CodeCapsNotDropped, Medium,
		"the engine's default capabilities are kept (cap_drop: [ALL] is missing)",
		"the agent chowns files, binds low ports, forges packets with NET_RAW",
		"add cap_drop: [ALL] / --cap-drop ALL",
		"capabilities-zero",
		"none",
	},
	CodeInitCaps: {
		CodeInitCaps, Info,
		"the container's init holds capabilities only to start its children under another, unprivileged uid, which drop them before they execute anything",
		"none while the init does what it claims: the probe capabilities-zero checks the agent's own sets from inside, and host-capabilities from the host",
		"nothing to change for agentbox-init; any other init must drop them (cap_drop: [ALL])",
		"capabilities-zero",
		"init itself keeps CAP_KILL for the run, to forward signals to the agent, a uid not its own",
	},
	CodeNewPrivileges: {
		CodeNewPrivileges, Medium,
		"no-new-privileges is not set",
		"a setuid binary in the image turns the agent into root",
		"add security_opt: [no-new-privileges:true] / --security-opt no-new-privileges",
		"no-new-privs",
		"none",
	},
	CodeNoLimits: {
		CodeNoLimits, Medium,
		"no memory or pids limit",
		"a runaway agent or a fork bomb takes the host down",
		"set mem_limit and pids_limit (or --memory and --pids-limit)",
		"",
		"CPU time, unless a CPU limit is set too",
	},
	CodeSeccompUnconfined: {
		CodeSeccompUnconfined, High,
		"seccomp is disabled",
		"the agent calls every syscall the kernel has: mount, bpf, keyctl, io_uring, kexec",
		"remove seccomp=unconfined; use the engine default or agentbox's profile",
		"seccomp-filter",
		"bugs in the syscalls that remain allowed",
	},
	CodeSeccompWeak: {
		CodeSeccompWeak, High,
		"a custom seccomp profile allows syscalls that agentbox's profile denies",
		"the agent reaches kernel surfaces (io_uring, bpf, userfaultfd, perf …) that agentbox keeps closed",
		"deny the listed syscalls in the profile, or use agentbox's profile",
		"seccomp-filter",
		"bugs in the syscalls that remain allowed",
	},
	CodeAppArmor: {
		CodeAppArmor, Medium,
		"AppArmor confinement is disabled",
		"nothing stops the agent writing /proc and /sys files that the profile would deny",
		"remove apparmor=unconfined; keep the engine's default profile",
		"",
		"none",
	},
	CodeSELinux: {
		CodeSELinux, Medium,
		"SELinux separation is disabled (label=disable or an unconfined type)",
		"the agent's process carries a label that may touch any host file",
		"remove label=disable / label=type:spc_t",
		"",
		"none",
	},
	CodeProcMasks: {
		CodeProcMasks, High,
		"/proc and /sys paths that engines mask or make read-only are exposed",
		"the agent reads kernel memory maps and keys, or writes /proc/sysrq-trigger",
		"remove systempaths=unconfined; keep the engine's masked and read-only paths",
		"proc-keys-unreadable",
		"none",
	},
	CodeHostPID: {
		CodeHostPID, High,
		"the container shares the host's PID namespace",
		"the agent sees and signals every host process and reads their environments",
		"remove pid: host / --pid host",
		"host-pids-invisible",
		"none",
	},
	CodeHostIPC: {
		CodeHostIPC, High,
		"the container shares the host's IPC namespace",
		"the agent reads host shared memory segments",
		"remove ipc: host / --ipc host",
		"",
		"none",
	},
	CodeHostUTS: {
		CodeHostUTS, Low,
		"the container shares the host's UTS namespace",
		"the agent changes the host's hostname",
		"remove uts: host / --uts host",
		"",
		"none",
	},
	CodeNoUserNS: {
		CodeNoUserNS, Info,
		"the container has no user namespace: its uids are host uids",
		"files the agent writes to binds belong to a real host uid, and an escape keeps that uid",
		"run under a user namespace (agentbox run, podman --userns=auto, dockerd --userns-remap)",
		"uid-map-non-identity",
		"none",
	},
	CodeDevices: {
		CodeDevices, High,
		"host devices are made available (devices, device cgroup rules)",
		"the agent reads or writes raw disks, the GPU or /dev/kvm",
		"remove devices / --device and device_cgroup_rules",
		"device-nodes-minimal",
		"none",
	},
	CodeSysctls: {
		CodeSysctls, Low,
		"kernel parameters are changed for the container",
		"the sandbox's network or IPC behaves unlike the audited default",
		"remove sysctls unless each one is justified",
		"",
		"none",
	},
	CodeAutoApprove: {
		CodeAutoApprove, Info,
		"the agent is set to act without asking (auto-approve, yolo, bypass permissions)",
		"nobody is asked before the agent uses any other fault found here",
		"fix the other findings first; then auto-approve runs inside a boundary that holds",
		"",
		"the agent acts without review inside the sandbox, by design",
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

// Lookup returns the rule for code.
func Lookup(code string) (Rule, bool) {
	r, ok := catalog[code]
	return r, ok
}
