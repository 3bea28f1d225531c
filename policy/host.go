package policy

import (
	"io/fs"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Host is everything the planner needs to know about the machine and the
// invoking user. The launcher captures it once (see the hostfacts in
// cmd/agentbox); tests fill it by hand. Resolve reads the host only through
// it, which keeps planning free of side effects.
type Host struct {
	// EUID and EGID are the launcher's effective ids; Rootless is EUID != 0.
	EUID, EGID uint32
	// Home is the invoking user's real home directory; Homes lists every
	// home directory on the host (from the password database, plus /root).
	Home  string
	Homes []string
	// Environ is the launcher's environment.
	Environ []string
	// Cwd is the launcher's working directory.
	Cwd string
	// Terminal is true when stdin and stdout are terminals.
	Terminal bool
	// CgroupV2 is true on a unified cgroup hierarchy. CanLimit is false
	// when this user cannot apply cgroup limits (rootless without
	// delegation), with LimitReason saying why.
	CgroupV2    bool
	CanLimit    bool
	LimitReason string
	// SELinux and AppArmor say which LSM is enabled; SELinuxLabels are the
	// process and mount labels reserved for this run when SELinux is on.
	SELinux       bool
	AppArmor      bool
	SELinuxLabels [2]string
	// AppArmorReady is true when agentbox's profile can be used: root
	// loads it, an ordinary user needs it loaded already.
	AppArmorReady bool
	// GatewaySocket is the run's gateway socket on the host, bound into the
	// sandbox at GatewaySocket; empty runs without a gateway.
	GatewaySocket string
	// InitPath is agentbox-init on the host, bound read-only into the
	// sandbox as its first process; empty runs the command directly.
	InitPath string
	// RootlessSingle is true for a rootless launcher that has no
	// subordinate ids (or no newuidmap): its own uid is then the only id of
	// the sandbox, and the agent is root of its user namespace.
	RootlessSingle bool
	// EngineRuntime is true when a container engine (Docker, Podman) runs
	// the sandbox with a runtime of its own choosing: agentbox executes no
	// runtime, so the named one is recorded as given, neither looked up on
	// this host nor checked as a program root would run.
	EngineRuntime bool
	// WorkspaceSockets are the pathname unix sockets found in the workspace
	// (workspace.Inspect), relative to it; the plan covers each. Nil: none
	// found, or the workspace was not inspected (agentbox spec).
	WorkspaceSockets []string
	// LandlockABI is the kernel's Landlock ABI, 0 without Landlock; at 9
	// and later Landlock also refuses connecting to sockets made outside
	// the sandbox.
	LandlockABI int
	// FS reads paths: stat, symlink resolution and PATH lookup.
	FS FS
	// MapIDs builds the user namespace maps for an identity (userns does
	// it for real, with this run's allocated range).
	MapIDs func(IDRequest) (uid, gid []specs.LinuxIDMapping, err error)
}

// IDRequest asks for id maps: the agent's ids inside and, when the
// workspace owner is not root, the host ids they must map to.
type IDRequest struct {
	UID, GID         uint32
	KeepUID, KeepGID *uint32
	Rootless         bool
}

// FS is the read-only view of the host file system that planning uses.
type FS interface {
	// Stat follows symlinks and returns the owner and mode of path.
	Stat(path string) (FileInfo, error)
	// Lstat does not follow a final symlink; FileInfo.Link is its target.
	Lstat(path string) (FileInfo, error)
	// ReadDir lists a directory like Lstat of each entry, sorted by name.
	ReadDir(path string) ([]DirEntry, error)
	// EvalSymlinks returns path with every symlink resolved.
	EvalSymlinks(path string) (string, error)
	// LookPath finds a command on the launcher's PATH.
	LookPath(name string) (string, error)
}

// FileInfo is the part of a stat result planning needs.
type FileInfo struct {
	Mode     fs.FileMode
	UID, GID uint32
	Link     string // symlink target, for Lstat of a symlink
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name string
	FileInfo
}
