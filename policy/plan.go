package policy

import specs "github.com/opencontainers/runtime-spec/specs-go"

// Plan is one resolved sandbox: every path resolved, every default applied,
// every decision made. Renderers translate it without deciding anything, and
// it has no side effects, so it can be printed, compared and tested whole.
type Plan struct {
	// Command is the agent's argv; Command[0] is an absolute path inside
	// the sandbox.
	Command []string `json:"command"`
	// Init is where agentbox-init is bound inside the sandbox; it is the
	// first process and starts Command after the self-test. Empty: Command
	// is the first process.
	Init string `json:"init,omitempty"`
	// Env is the agent's complete environment, KEY=value.
	Env []string `json:"env"`
	// Cwd is the working directory inside the sandbox (the workspace).
	Cwd string `json:"cwd"`
	// Workspace is the resolved workspace directory (same path inside).
	Workspace string `json:"workspace"`
	// Identity is who the agent is inside and outside the sandbox.
	Identity Identity `json:"identity"`
	// Hostname is the sandbox's host name.
	Hostname string `json:"hostname"`
	// Rootfs describes the sandbox's root filesystem.
	Rootfs Rootfs `json:"rootfs"`
	// Mounts are the bind and tmpfs mounts on top of the root, in order.
	Mounts []Mount `json:"mounts"`
	// Limits are the cgroup limits, nil when the host cannot apply them
	// (then Residuals says so).
	Limits *ResolvedLimits `json:"limits,omitempty"`
	// LSM is the mandatory access control layer chosen for this host.
	LSM LSM `json:"lsm"`
	// Runtime is the OCI runtime to run the bundle with.
	Runtime Runtime `json:"runtime"`
	// Terminal is true when the agent gets a TTY.
	Terminal bool `json:"terminal"`
	// Network is what the gateway lets out and what the agent may use
	// inside (the policy's, as given).
	Network Network `json:"network"`
	// Gateway is the gateway's model configuration (the policy's).
	Gateway Gateway `json:"gateway"`
	// Accepted are the policy's accepted findings, carried to the audit.
	Accepted []Acceptance `json:"accepted,omitempty"`
	// Residuals are the layers this host or this policy cannot provide,
	// each with its reason; the ledger records them.
	Residuals []Residual `json:"residuals,omitempty"`
}

// Identity says which uid the agent runs as and how ids map to the host.
type Identity struct {
	// UID and GID are the agent's ids inside the sandbox.
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// User is the agent's user name inside and Home its (fresh) home.
	User string `json:"user"`
	Home string `json:"home"`
	// KeepUID and KeepGID are the host ids the agent's ids map to so that
	// files written in the workspace belong to the workspace's owner; nil
	// when the owner is root and the agent maps into the sandbox's range.
	KeepUID *uint32 `json:"keep_uid,omitempty"`
	KeepGID *uint32 `json:"keep_gid,omitempty"`
	// GrantWorkspace is true when the agent's host uid is not the
	// workspace owner's and must be granted access (an ACL) for the run.
	GrantWorkspace bool `json:"grant_workspace,omitempty"`
	// UIDMappings and GIDMappings are the user namespace's id maps. No
	// container id maps to host root.
	UIDMappings []specs.LinuxIDMapping `json:"uid_mappings"`
	GIDMappings []specs.LinuxIDMapping `json:"gid_mappings"`
	// Rootless is true when agentbox runs as an ordinary user.
	Rootless bool `json:"rootless,omitempty"`
}

// ProcessArgs is the argv of the sandbox's first process.
func (p *Plan) ProcessArgs() []string {
	if p.Init != "" {
		return []string{p.Init}
	}
	return p.Command
}

// AgentHostUID returns the host uid the agent's files come out owned by.
func (id Identity) AgentHostUID() (uint32, bool) { return hostID(id.UIDMappings, id.UID) }

// AgentHostGID returns the host gid of the agent's primary group.
func (id Identity) AgentHostGID() (uint32, bool) { return hostID(id.GIDMappings, id.GID) }

func hostID(maps []specs.LinuxIDMapping, inside uint32) (uint32, bool) {
	for _, m := range maps {
		if inside >= m.ContainerID && inside-m.ContainerID < m.Size {
			return m.HostID + inside - m.ContainerID, true
		}
	}
	return 0, false
}

// Rootfs is the sandbox's root: either a directory the bundle synthesizes
// (Image empty) or an unpacked image root.
type Rootfs struct {
	// Image is an unpacked image root (--rootfs), or "" for the root that
	// agentbox synthesizes from read-only binds of the host.
	Image string `json:"image,omitempty"`
	// Symlinks are links to create in a synthesized root (bin → usr/bin).
	Symlinks map[string]string `json:"symlinks,omitempty"`
	// Files are small files written into the synthesized root, or bound
	// over an image root's files, keyed by absolute path inside (/etc/passwd).
	Files map[string]string `json:"files,omitempty"`
}

// MountKind says why a mount is there; the audit and the ledger read it.
type MountKind string

// Mount kinds.
const (
	KindSystem    MountKind = "system"    // a host system directory, read-only
	KindEtc       MountKind = "etc"       // a file programs need from the host's /etc, read-only
	KindInstall   MountKind = "install"   // the agent's install prefix, read-only
	KindWorkspace MountKind = "workspace" // the workspace, read-write
	KindExtra     MountKind = "extra"     // a bind the policy asked for
	KindTmpfs     MountKind = "tmpfs"     // a fresh in-memory filesystem
	KindFile      MountKind = "file"      // a synthesized file bound over an image root
	KindRuntime   MountKind = "runtime"   // a file agentbox itself provides (its init)
)

// Mount is one mount on top of the root.
type Mount struct {
	Kind        MountKind `json:"kind"`
	Source      string    `json:"source,omitempty"` // host path; empty for tmpfs
	Destination string    `json:"destination"`
	ReadOnly    bool      `json:"read_only"`
	// Options are extra mount options (tmpfs size and mode, for example).
	Options []string `json:"options,omitempty"`
}

// ResolvedLimits are the cgroup limits in units the kernel takes.
type ResolvedLimits struct {
	MemoryBytes int64  `json:"memory_bytes"`
	Pids        int64  `json:"pids"`
	CPUWeight   uint64 `json:"cpu_weight"`
	// CgroupV2 selects cpu.weight (v2) or the equivalent cpu.shares (v1).
	CgroupV2 bool `json:"cgroup_v2"`
}

// LSMKind names a mandatory access control layer.
type LSMKind string

// LSM kinds.
const (
	LSMSELinux  LSMKind = "selinux"
	LSMAppArmor LSMKind = "apparmor"
	LSMNone     LSMKind = "none"
)

// LSM is the chosen mandatory access control and its labels.
type LSM struct {
	Kind            LSMKind `json:"kind"`
	ProcessLabel    string  `json:"process_label,omitempty"`
	MountLabel      string  `json:"mount_label,omitempty"`
	AppArmorProfile string  `json:"apparmor_profile,omitempty"`
}

// Runtime is a resolved OCI runtime binary.
type Runtime struct {
	Name string `json:"name"` // runc, crun, runsc, or the base name of a path
	Path string `json:"path"`
}

// Residual is a layer of the boundary that is weaker than the default, and
// why: the host cannot provide it, or the policy accepted a finding.
type Residual struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}
