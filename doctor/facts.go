package doctor

import (
	"context"

	"github.com/agentbox/agentbox/apparmor"
	"github.com/agentbox/agentbox/audit"
	"github.com/agentbox/agentbox/engine/advisory"
	"github.com/agentbox/agentbox/policy"
	"github.com/agentbox/agentbox/userns"
)

// Facts is everything doctor read of a host, gathered once. Checks read
// nothing else. A fact that could not be read is left empty with the reason
// in its Err field; the check that needs it says UNKNOWN.
type Facts struct {
	User     UserFacts      `json:"user"`
	OS       OSRelease      `json:"os"`
	Kernel   string         `json:"kernel"` // /proc/sys/kernel/osrelease
	UserNS   UserNSFacts    `json:"userns"`
	IDs      IDFacts        `json:"ids"`
	Seccomp  SeccompFacts   `json:"seccomp"`
	LSM      LSMFacts       `json:"lsm"`
	Cgroup   CgroupFacts    `json:"cgroup"`
	Runtimes []RuntimeFacts `json:"runtimes"`
	// Default is the runtime a run gets without --runtime (Run fills it
	// with the launcher's self-test verdicts; Gather without them).
	Default   DefaultRuntime `json:"default_runtime"`
	Container ContainerFacts `json:"container"`
	VM        VMFacts        `json:"vm"`
	Docker    DockerFacts    `json:"docker"`
	Podman    PodmanFacts    `json:"podman"`
	// Containerd is nil when neither containerd nor its socket is here
	// and the policy does not name the engine.
	Containerd *ContainerdFacts `json:"containerd,omitempty"`
	Agents     []AgentFacts     `json:"agents"`
	SelfTest   SelfTestFacts    `json:"selftest"`
	// RunRoot is the run root's filesystem (Run fills it from
	// Options.RunRoot; Gather cannot know the path).
	RunRoot RunRootFacts `json:"run_root"`
	// Leftovers is what earlier builds left unseen on the host (Run fills
	// it from Options.Leftovers).
	Leftovers LeftoverFacts `json:"leftovers"`
	// Darwin is what a Mac's dedicated account needs (darwin.go); nil on
	// every other host.
	Darwin *DarwinFacts `json:"darwin,omitempty"`
}

// UserFacts is the invoking user.
type UserFacts struct {
	EUID int    `json:"euid"`
	Name string `json:"name"`
	GID  uint32 `json:"gid"`
	Home string `json:"home"`
}

// Rootless reports whether doctor runs as an ordinary user.
func (u UserFacts) Rootless() bool { return u.EUID != 0 }

// OSRelease is the part of /etc/os-release doctor uses.
type OSRelease struct {
	ID        string `json:"id"`         // "debian", "ubuntu", "fedora"
	VersionID string `json:"version_id"` // "12", "24.04", "41"
	Codename  string `json:"codename"`   // "bookworm", "noble"
	Pretty    string `json:"pretty"`
}

// Sysctl is one /proc/sys value; Present is false when the kernel has no
// such file.
type Sysctl struct {
	Present bool   `json:"present"`
	Value   string `json:"value"`
}

// UserNSFacts is what the kernel says about user namespaces.
type UserNSFacts struct {
	Max              Sysctl `json:"max_user_namespaces"`
	UnprivClone      Sysctl `json:"unprivileged_userns_clone"`
	AppArmorRestrict Sysctl `json:"apparmor_restrict_unprivileged_userns"`
	// CreateRan is false when the creation probe could not be attempted;
	// CreateErr is why it failed ("" when it worked).
	CreateRan bool   `json:"create_ran"`
	CreateErr string `json:"create_err,omitempty"`
}

// IDFacts is where a sandbox's ids would come from.
type IDFacts struct {
	// As root: the source of id slots (dedicated or builtin) and why slots
	// cannot be had ("" when they can).
	Source   userns.Source `json:"source,omitempty"`
	SlotsErr string        `json:"slots_err,omitempty"`
	// Rootless: the mode policy.RootlessIDMap chooses and, for a single
	// id, its residual's reason.
	Mode   policy.IDMode `json:"mode,omitempty"`
	Reason string        `json:"reason,omitempty"`
	// SubUIDs and SubGIDs are the invoking user's entries (rootless) or
	// the dedicated user's (root).
	SubUIDs  []userns.SubIDEntry `json:"subuids,omitempty"`
	SubGIDs  []userns.SubIDEntry `json:"subgids,omitempty"`
	NewIDMap bool                `json:"newidmap"`
	// FreeStart is where a new subordinate range can start: 100000, or
	// the first multiple of 65536 past every range of the host.
	FreeStart uint64 `json:"free_start"`
	// Err is a malformed or unreadable id database.
	Err string `json:"err,omitempty"`
}

// SeccompFacts is the kernel's seccomp support.
type SeccompFacts struct {
	// Mode is the Seccomp field of /proc/self/status ("" when absent):
	// 0 none, 1 strict, 2 filter (doctor itself is already filtered).
	Mode    string `json:"mode"`
	Filters string `json:"filters,omitempty"`
	// Actions lists /proc/sys/kernel/seccomp/actions_avail; ActionsRead is
	// false when the file is missing.
	Actions     []string `json:"actions,omitempty"`
	ActionsRead bool     `json:"actions_read"`
}

// LSMFacts is the active Linux security modules.
type LSMFacts struct {
	// Active is /sys/kernel/security/lsm; Known is false when securityfs
	// is not mounted.
	Active []string `json:"active,omitempty"`
	Known  bool     `json:"known"`
	// SELinux is "enforcing", "permissive" or "" (not enabled).
	SELinux  string          `json:"selinux"`
	AppArmor apparmor.Status `json:"apparmor"`
	// Parser is apparmor_parser's path ("" when missing); Profiles are the
	// names of the loaded AppArmor profiles.
	Parser      string   `json:"apparmor_parser,omitempty"`
	Profiles    []string `json:"apparmor_profiles,omitempty"`
	LandlockABI int      `json:"landlock_abi"`
	LandlockErr string   `json:"landlock_err,omitempty"`
}

// CgroupFacts is the cgroup layout and whether this user can apply limits.
type CgroupFacts struct {
	// Mode is "v2" (unified), "hybrid" (v1 controllers plus v2 at
	// /sys/fs/cgroup/unified), "v1", or "" when no cgroup is mounted.
	Mode string `json:"mode"`
	// CanLimit and Reason are the planner's decision (host.Tree.Cgroup):
	// root always can; an ordinary user only on v2 with memory and pids
	// delegated to a cgroup it can write.
	CanLimit bool   `json:"can_limit"`
	Reason   string `json:"reason,omitempty"`
	// Err is why the mount table could not be read ("" when it could).
	Err string `json:"err,omitempty"`
}

// RuntimeFacts is one OCI runtime found on PATH.
type RuntimeFacts struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Version is the upstream version the binary reports ("1.1.5");
	// VersionErr says why it is empty.
	Version    string `json:"version"`
	VersionErr string `json:"version_err,omitempty"`
	// Package is the package that installed the binary; nil when none
	// owns it.
	Package *Package `json:"package,omitempty"`
	// Refusal is why `agentbox run` refuses this runtime on this host
	// (exit code 4), "" when it does not: a runsc whose `run` cannot pass
	// agentbox-init its channel (engine.CheckRunsc). Doctor reads it;
	// `agentbox run` decides it itself.
	Refusal string `json:"refusal,omitempty"`
}

// DefaultRuntime is the runtime a policy without runtime: gets on this
// host, as the planner chooses it (policy.ChooseRuntime), and why.
type DefaultRuntime struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Package is an installed distribution package.
type Package = advisory.Package

// ContainerFacts is the evidence that doctor runs inside a container.
type ContainerFacts struct {
	// Evidence is each sign that decides it (an engine's cgroup path, an
	// overlay root, /run/.containerenv); Markers are files an image can
	// carry into a VM or host (/.dockerenv) and so do not decide alone.
	Evidence []string `json:"evidence,omitempty"`
	Markers  []string `json:"markers,omitempty"`
}

// VMFacts is the evidence of a hypervisor.
type VMFacts struct {
	Hypervisor bool   `json:"hypervisor"` // the cpuinfo flag
	Vendor     string `json:"vendor,omitempty"`
	Product    string `json:"product,omitempty"`
}

// DockerFacts is the Docker engine on this host.
type DockerFacts struct {
	Installed bool   `json:"installed"`
	Socket    string `json:"socket,omitempty"`
	// SocketFound is false when no socket exists at Socket.
	SocketFound bool     `json:"socket_found"`
	SocketMode  string   `json:"socket_mode,omitempty"`
	SocketOwner string   `json:"socket_owner,omitempty"`
	SocketGroup string   `json:"socket_group,omitempty"`
	Members     []string `json:"members,omitempty"` // of SocketGroup
	// Config is /etc/docker/daemon.json; ConfigFound is false when it is
	// missing and ConfigErr says why it could not be read.
	ConfigFound bool         `json:"config_found"`
	ConfigErr   string       `json:"config_err,omitempty"`
	Config      DaemonConfig `json:"config"`
	// RunningUserNS is what the running dockerd says: "yes" when it remaps
	// users (or runs rootless), "no" when it does not, "" when it could not
	// be asked (RunningUserNSErr says why) or no socket exists.
	RunningUserNS    string `json:"running_userns,omitempty"`
	RunningUserNSErr string `json:"running_userns_err,omitempty"`
}

// DaemonConfig is the part of daemon.json doctor judges.
type DaemonConfig struct {
	UsernsRemap     string `json:"userns-remap,omitempty"`
	NoNewPrivileges bool   `json:"no-new-privileges,omitempty"`
	LiveRestore     bool   `json:"live-restore,omitempty"`
}

// PodmanFacts is Podman on this host.
type PodmanFacts struct {
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
}

// AgentFacts is one agent CLI found on PATH or by its settings file.
type AgentFacts struct {
	Name    string              `json:"name"`
	Path    string              `json:"path,omitempty"`
	Configs []audit.AgentConfig `json:"configs,omitempty"`
}

// Gather reads every fact of h. It never fails: what cannot be read is
// recorded as such.
func Gather(ctx context.Context, h Host) *Facts { return gather(ctx, h, ContainerdPolicy{}) }

// gather is Gather with the containerd daemon that policy cp would use.
func gather(ctx context.Context, h Host, cp ContainerdPolicy) *Facts {
	f := &Facts{}
	containerd := func(ctx context.Context, h Host, f *Facts) { gatherContainerd(ctx, h, f, cp) }
	for _, step := range []func(context.Context, Host, *Facts){
		gatherUser, gatherOS, gatherKernel, gatherUserNS, gatherIDs,
		gatherSeccomp, gatherLSM, gatherCgroup, gatherRuntimes,
		gatherContainer, gatherVM, gatherDocker, gatherDockerUserNS, gatherPodman, containerd, gatherAgents, gatherDarwin,
	} {
		step(ctx, h, f)
	}
	return f
}
