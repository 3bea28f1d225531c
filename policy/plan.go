package policy

import (
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/agentbox/agentbox/agents"
)

// Plan is one resolved sandbox: every path resolved, every default applied,
// every decision made, the agent adapter's included. Renderers translate it
// without deciding anything, and it has no side effects, so it can be
// printed, compared and tested whole. What it names but does not hold is
// made after it, from it: the run directory, the gateway at GatewaySocket,
// the id maps of Identity.IDMap (spec.Extras), the seccomp filter of
// Seccomp.
type Plan struct {
	// Target is what runs the sandbox (Run.Target).
	Target Target `json:"target"`
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
	// Landlock is the agent's Landlock ruleset where LSM is none; nil
	// where a label confines the agent, or no agentbox-init applies it.
	Landlock *Landlock `json:"landlock,omitempty"`
	// Runtime is the OCI runtime to run the bundle with.
	Runtime Runtime `json:"runtime"`
	// CgroupsPath is the sandbox's cgroup below the hierarchy's root,
	// /agentbox/RUN_ID; empty when agentbox places none: rootless (the
	// runtime picks one the user may write) or a plan of no run (compose,
	// where the engine does).
	CgroupsPath string `json:"cgroups_path,omitempty"`
	// Seccomp names the seccomp profile the sandbox gets
	// (seccomp/profiles.Named); the renderers install it.
	Seccomp string `json:"seccomp"`
	// Terminal is true when the agent gets a TTY.
	Terminal bool `json:"terminal"`
	// Network is what the gateway lets out and what the agent may use
	// inside (the policy's, as given).
	Network Network `json:"network"`
	// Gateway is the gateway's model configuration (the policy's).
	Gateway Gateway `json:"gateway"`
	// GatewaySocket is the run's gateway socket on the host, in the run
	// directory, bound at the sandbox's GatewaySocket; empty: no gateway of
	// agentbox's own.
	GatewaySocket string `json:"gateway_socket,omitempty"`
	// GatewayPort is, for TargetUser, the host loopback port (127.0.0.1
	// and ::1) where agentbox-init relays to the gateway's socket, the one
	// port the account's network fence lets it reach; 0 inside a sandbox,
	// where the port is GatewayPort (GatewayLoopbackPort).
	GatewayPort int `json:"gateway_port,omitempty"`
	// Agent is what the agent adapter made of the command (Command and Env
	// are already the adapter's); zero without a gateway.
	Agent Agent `json:"agent"`
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
	// IDMap is the request for the user namespace's id maps: UID, GID,
	// KeepUID and KeepGID above, mapped the way its mode says. The maps are
	// made after planning (a slot is leased for the run), checked with
	// CheckMappings, and rendered from spec.Extras.
	IDMap IDMap `json:"id_map"`
	// Rootless is true when agentbox runs as an ordinary user.
	Rootless bool `json:"rootless,omitempty"`
	// Init is who agentbox-init runs as, when it is the first process.
	Init InitIdentity `json:"init"`
}

// InitIdentity is who agentbox-init runs as inside the sandbox.
//
// Split (the default wherever the id map has more than one id), init is uid
// and gid 0 of the sandbox's user namespace, which the map sends to an
// unprivileged host id (never host root), and holds only Caps: what it needs
// to give its children the agent's ids (CAP_SETUID, CAP_SETGID, and
// CAP_SETPCAP to empty their bounding set), to hand the agent the sandbox's
// terminal, which the runtime makes owned by init's uid (CAP_CHOWN, through
// the open fd), and to signal the agent, a uid not its own (CAP_KILL). Its
// children drop all of it before they execute anything (the probes, the
// agent), and init itself keeps only CAP_KILL once the agent runs. The agent, another uid without capabilities, can then
// neither signal, ptrace nor prlimit its init.
//
// Not split (rootless without subordinate ids: one id is mapped), init runs
// as the agent, with no capability; the residual init-shares-agent-uid
// records that.
type InitIdentity struct {
	// Split is true when init runs under ids the agent does not have.
	Split bool `json:"split"`
	// UID and GID are init's ids inside: 0 when Split, else the agent's.
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// Caps are init's capabilities (bounding, effective and permitted; never
	// inheritable or ambient, so none survives an exec): InitCaps when Split,
	// else none.
	Caps []string `json:"caps,omitempty"`
}

// InitCaps are the capabilities a split init holds; see InitIdentity.
var InitCaps = []string{"CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_CHOWN", "CAP_KILL"}

// ProcessArgs is the argv of the sandbox's first process.
func (p *Plan) ProcessArgs() []string {
	if p.Init != "" {
		return []string{p.Init}
	}
	return p.Command
}

// ProcessUser is who the sandbox's first process runs as: init's ids and
// capabilities when agentbox-init is the first process, else the agent's
// ids and no capability.
func (p *Plan) ProcessUser() (uid, gid uint32, caps []string) {
	if p.Init != "" {
		i := p.Identity.Init
		return i.UID, i.GID, append([]string(nil), i.Caps...)
	}
	return p.Identity.UID, p.Identity.GID, nil
}

// ProcessCwd is the first process's working directory: / for a split init,
// whose uid need not reach the workspace (it starts the agent there, after
// switching to the agent's ids), else the workspace.
func (p *Plan) ProcessCwd() string {
	if p.Init != "" && p.Identity.Init.Split {
		return "/"
	}
	return p.Cwd
}

// IDMode is how a sandbox's ids map to the host's; Resolve decides it once.
type IDMode string

// ID map modes.
const (
	// IDSlot (root): container ids 0..N-1 map onto a slot of host ids
	// leased for the run after planning (userns.Allocator), the agent's ids
	// onto KeepUID and KeepGID where those are set.
	IDSlot IDMode = "slot"
	// IDSubIDs (rootless, with subordinate ids and newuidmap): container
	// ids 0..N-1 map onto IDMap.UIDs and GIDs, the user's subordinate
	// ranges, and the agent's onto the user's own ids.
	IDSubIDs IDMode = "subids"
	// IDSingle (rootless without): the user's own uid and gid are the only
	// ids, the agent's (0 inside); the residual rootless-single-id says so.
	IDSingle IDMode = "single"
	// IDEngine: a container engine runs the sandbox and its ids are host
	// ids (Docker without userns-remap); agentbox maps none.
	IDEngine IDMode = "engine"
)

// IDMap is the plan's id-map request beyond the agent's ids: the mode and,
// for IDSubIDs, the host ranges container ids 0..Count-1 map onto. A
// slot's range is leased after planning and is not here.
type IDMap struct {
	Mode IDMode  `json:"mode"`
	UIDs IDRange `json:"uids,omitzero"`
	GIDs IDRange `json:"gids,omitzero"`
}

// Agent is what the agent adapter (package agents) made of the command.
type Agent struct {
	// Name is the adapter's name: codex, claude, …, or generic.
	Name string `json:"name"`
	// Permission is the permission mode the command selects.
	Permission agents.Permission `json:"permission"`
	// TokenVars are the environment variables that carry the per-run
	// gateway token (agents.Launch.TokenVars), which the audit and the
	// environment probe do not count as credentials.
	TokenVars []string `json:"token_vars,omitempty"`
}

// HostID returns the host id that inside maps to under maps.
func HostID(maps []specs.LinuxIDMapping, inside uint32) (uint32, bool) {
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
	// Why says, for a bind of the command's closure (KindInstall), what
	// needs it and what it is: "codex (found on PATH at …): the
	// node_modules that holds its package". Empty for other kinds, whose
	// Kind says it.
	Why string `json:"why,omitempty"`
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
	// Chosen says who chose it (ChosenPolicy, ChosenDefault) and Reason
	// why, in words for the run's record; both empty where no runtime of
	// agentbox's runs the sandbox (compose, the dedicated user).
	Chosen string `json:"chosen,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Residual is a layer of the boundary that is weaker than the default, and
// why: the host cannot provide it, or the policy accepted a finding.
type Residual struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
	// Probes are the self-test probes and host checks that this residual
	// makes report ALLOW: the launcher records those results as they are
	// and, for this reason, does not refuse the launch for them. Empty for
	// most residuals, whose layer no probe watches or whose probes still pass.
	Probes []string `json:"probes,omitempty"`
	// Unprobed are the self-test probes this residual takes out of the
	// run's self-test: what they try does not exist on this host (a
	// Linux system call or procfs file on macOS), so they could only say
	// UNKNOWN or "absent". The reason names the layer that stands in for
	// each and the probe that checks that layer; the launcher runs every
	// other probe (Plan.Unprobed).
	Unprobed []string `json:"unprobed,omitempty"`
}
