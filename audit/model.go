package audit

import (
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/policy"
)

// Tri is a three-valued answer. What a source could not read is Unknown and is
// never assumed to be either Yes or No.
type Tri string

// The values of Tri.
const (
	Unknown Tri = "unknown"
	No      Tri = "no"
	Yes     Tri = "yes"
)

// Container is the normalised model of one container or compose service that
// every source fills and every check reads. Zero values mean "not set", which
// for a container runtime is the permissive default (no limits, a writable
// root, new privileges allowed) unless a field says otherwise.
type Container struct {
	// Name is the container name, or the service name for compose.
	Name string `json:"name"`
	// Source says where the model came from: "oci", "inspect", "docker",
	// "podman", "compose" or "kube".
	Source string `json:"source"`
	// Image is the image reference, when the source has one.
	Image string `json:"image,omitempty"`
	// File is the file the model was read from; Line is the line of the
	// service in it (compose only; 0 when unknown).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Profiles are the compose profiles the service belongs to, sorted;
	// none means it runs with every `docker compose up`.
	Profiles []string `json:"profiles,omitempty"`
	// KeyLines maps a compose key of the service ("privileged", "cap_add",
	// "network_mode" …) to the line where its effective value is written.
	KeyLines map[string]Location `json:"-"`

	// ProjectDir is the compose project directory (compose, or the
	// label compose sets on a container it started); WorkingDir is the
	// working directory inside the container.
	ProjectDir string `json:"project_dir,omitempty"`
	WorkingDir string `json:"working_dir,omitempty"`
	// PresumedWorkspace is the host path of the read-write bind presumed to
	// be the workspace when none was declared (presumeWorkspace); Audit
	// sets it.
	PresumedWorkspace string `json:"presumed_workspace,omitempty"`
	// WorkspaceLabel is the host path the container's workspace label
	// (policy.WorkspaceLabel) names, as written; LabeledWorkspace is the
	// read-write bind it names, which Audit sets when one matches. A label
	// that names no read-write bind of the container is ignored, and then
	// no bind is presumed the workspace either.
	WorkspaceLabel   string `json:"workspace_label,omitempty"`
	LabeledWorkspace string `json:"labeled_workspace,omitempty"`
	// LabelAccepts are the acceptances the container's accept labels
	// carry (policy.LabelAcceptances). They give informational findings
	// their reason and never accept a finding that fails.
	LabelAccepts []policy.Acceptance `json:"label_accepts,omitempty"`

	Mounts []Mount  `json:"mounts,omitempty"`
	Env    []EnvVar `json:"env,omitempty"`
	// APISocket is compose's use_api_socket: the engine socket is bound in.
	APISocket bool `json:"api_socket,omitempty"`

	// User is the user the process runs as, as the source spells it ("",
	// "root", "0", "1000:1000", "agent"). Empty means the image default,
	// which is root unless the image sets USER.
	User string `json:"user,omitempty"`
	// UserNS says whether the container has a user namespace in which root
	// is not host root.
	UserNS Tri `json:"userns"`
	// RootUser is the host account that root inside the container is, when
	// that is an ordinary user ("agentbox-test (uid 1001)"): rootless
	// Podman maps container root to the user who runs it, unless --userns
	// says otherwise. Empty when unknown, or when root is no user's.
	RootUser string `json:"root_user,omitempty"`
	// Privileged is docker/podman --privileged (inferred for OCI specs).
	Privileged bool `json:"privileged,omitempty"`
	// CapAdd and CapDrop are the capabilities added and dropped, upper case
	// with the CAP_ prefix ("ALL" stays "ALL").
	CapAdd  []string `json:"cap_add,omitempty"`
	CapDrop []string `json:"cap_drop,omitempty"`
	// Caps is the resulting bounding set; CapsKnown says whether it is.
	Caps      []string `json:"caps,omitempty"`
	CapsKnown bool     `json:"caps_known"`
	// EngineCaps is the default set of the engine that runs the container,
	// which the capability check holds Caps to; nil means Docker's
	// (DefaultCaps).
	EngineCaps []string `json:"-"`
	// CapsInherited are the capabilities of the inheritable and ambient
	// sets, which an exec under a uid other than 0 keeps (OCI specs only).
	CapsInherited []string `json:"caps_inherited,omitempty"`
	// NoNewPrivileges is the no_new_privs bit.
	NoNewPrivileges Tri  `json:"no_new_privileges"`
	ReadOnlyRoot    bool `json:"read_only_root,omitempty"`

	// NetworkMode is "host", "none", "bridge", "default", "private" (a new,
	// empty network namespace), "container:X", "service:X", "ns:PATH" or
	// a user network's name.
	NetworkMode string    `json:"network_mode,omitempty"`
	Networks    []Network `json:"networks,omitempty"`

	Seccomp  Seccomp `json:"seccomp"`
	AppArmor string  `json:"apparmor,omitempty"`
	// SELinux holds label options ("disable", "type:spc_t") or an OCI
	// process label.
	SELinux []string `json:"selinux,omitempty"`
	// SystemPaths is "unconfined" when masked and read-only /proc and /sys
	// paths were removed (systempaths=unconfined).
	SystemPaths string `json:"system_paths,omitempty"`
	// MaskedPaths and ReadonlyPaths are the runtime's lists, when known.
	MaskedPaths   []string `json:"masked_paths,omitempty"`
	ReadonlyPaths []string `json:"readonly_paths,omitempty"`
	PathsKnown    bool     `json:"paths_known"`
	// ProcMounted says whether a procfs is mounted (it is in every
	// docker/podman container).
	ProcMounted bool `json:"proc_mounted"`

	PidMode string `json:"pid_mode,omitempty"`
	IpcMode string `json:"ipc_mode,omitempty"`
	UTSMode string `json:"uts_mode,omitempty"`

	Devices     []Device          `json:"devices,omitempty"`
	DeviceRules []string          `json:"device_cgroup_rules,omitempty"`
	Sysctls     map[string]string `json:"sysctls,omitempty"`

	// MemoryLimit is in bytes and PidsLimit a count; 0 or less is no limit.
	MemoryLimit int64 `json:"memory_limit,omitempty"`
	PidsLimit   int64 `json:"pids_limit,omitempty"`
	// CPULimit is in CPUs; 0 is no limit.
	CPULimit float64 `json:"cpu_limit,omitempty"`

	Entrypoint []string `json:"entrypoint,omitempty"`
	Command    []string `json:"command,omitempty"`

	// AgentConfigs are the agent settings files found behind the mounts.
	AgentConfigs []AgentConfig `json:"agent_configs,omitempty"`

	// ServiceAccountToken says whether a Kubernetes service-account token
	// is mounted, and ServiceAccountWhy how that was learned; "" for the
	// sources that have no service accounts.
	ServiceAccountToken Tri    `json:"service_account_token,omitempty"`
	ServiceAccountWhy   string `json:"service_account_why,omitempty"`
	// PodSecurity is the Pod Security evaluator's verdict on the pod the
	// container belongs to (Kubernetes manifests only).
	PodSecurity *PodSecurity `json:"pod_security,omitempty"`
}

// Location is a place in a file.
type Location struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// Mount is one mount of the container.
type Mount struct {
	// Type is "bind", "volume", "tmpfs", "proc", "sysfs", "npipe", "image",
	// "cluster" or another filesystem type.
	Type string `json:"type"`
	// Source is the host path of a bind, the name of a volume.
	Source      string `json:"source,omitempty"`
	Destination string `json:"destination"`
	ReadOnly    bool   `json:"read_only,omitempty"`
	// HostPath is Source cleaned and resolved through symlinks on the
	// auditing host (Resolve); empty when not resolved.
	HostPath string `json:"host_path,omitempty"`
	// SameFile names the engine socket that Source is the same file as
	// (a hard link or a bind of it under another name).
	SameFile string `json:"same_file,omitempty"`
	// Grant says whose privileges the source grants when it is a unix
	// socket on the auditing host (Resolve, then the engine); nil otherwise.
	Grant *SocketGrant `json:"socket_grant,omitempty"`
	Location
}

// EnvVar is one environment variable. Its value is used to recognise
// credentials and engine addresses and is never serialised or printed.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"-"`
	// FromHost is true when the value is passed through from the
	// environment of whoever runs compose: `- NAME`, `NAME:`, a value
	// that interpolates a variable (`${NAME:-}`), an env_file line `NAME`.
	FromHost bool `json:"from_host,omitempty"`
	// FromSecret is true when the value is read from a Kubernetes Secret
	// (secretKeyRef, envFrom secretRef): a credential whatever the name.
	// From says where a value that is not written in place comes from.
	FromSecret bool   `json:"from_secret,omitempty"`
	From       string `json:"from,omitempty"`
	Location
}

// Network is one network the container is attached to.
type Network struct {
	Name     string `json:"name"`
	Internal Tri    `json:"internal"`
	External bool   `json:"external,omitempty"`
	// Why says how Internal was learned, or why it could not be.
	Why string `json:"why,omitempty"`
}

// Seccomp is the container's seccomp setting.
type Seccomp struct {
	// Mode is "default" (the engine's default profile), "custom",
	// "unconfined" or "unknown".
	Mode string `json:"mode"`
	// Profile names the custom profile (a file, or "inline").
	Profile string `json:"profile,omitempty"`
	// Weak lists the syscalls agentbox's profile denies that a custom
	// profile allows; WeakKnown says whether the comparison was made.
	Weak      []string `json:"weak,omitempty"`
	WeakKnown bool     `json:"weak_known,omitempty"`
	// Error says why a custom profile could not be read.
	Error string `json:"error,omitempty"`
}

// Device is a host device made available to the container.
type Device struct {
	Host        string `json:"host"`
	Container   string `json:"container,omitempty"`
	Permissions string `json:"permissions,omitempty"`
}

// AgentConfig is an agent's settings file found behind a mount.
type AgentConfig struct {
	Agent string `json:"agent"`
	Path  string `json:"path"`
	// AutoApprove describes the auto-approve setting found ("" for none).
	AutoApprove string `json:"auto_approve,omitempty"`
}

// Argv is the command the container runs: entrypoint then command.
func (c *Container) Argv() []string {
	return append(append([]string(nil), c.Entrypoint...), c.Command...)
}

// keyLocation returns where compose key is written, falling back to the
// service's own line.
func (c *Container) keyLocation(key string) Location {
	if l, ok := c.KeyLines[key]; ok {
		return l
	}
	return Location{File: c.File, Line: c.Line}
}

// RunsAsRoot says whether user names uid 0: empty (the image default, root
// unless the image sets USER), "root", "0", "0:…" or "root:…".
func RunsAsRoot(user string) bool {
	u, _, _ := strings.Cut(strings.TrimSpace(user), ":")
	return u == "" || u == "root" || u == "0"
}

// NormalizeCap returns a capability name in upper case with the CAP_ prefix;
// "ALL" stays "ALL".
func NormalizeCap(c string) string {
	c = strings.ToUpper(strings.TrimSpace(c))
	if c == "ALL" || c == "" || strings.HasPrefix(c, "CAP_") {
		return c
	}
	return "CAP_" + c
}

// cleanPath cleans an absolute host path, mapping /var/run to /run (one is a
// symlink to the other on every current distribution), as the path lists
// spell it (policy.CleanHostPath).
func cleanPath(p string) string { return policy.CleanHostPath(p) }

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// formatBytes renders n bytes for a human.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + "B"
	}
	suffix := "KMGTPE"
	v, i := float64(n)/unit, 0
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + string(suffix[i]) + "iB"
}

// OrLocation is l when it names a line, else d.
func OrLocation(l, d Location) Location {
	if l.Line > 0 {
		return l
	}
	return d
}
