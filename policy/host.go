package policy

import (
	"io/fs"
)

// Host is everything the planner needs to know about the machine and the
// invoking user: facts only, read before planning and never an effect or
// a callback. The launcher captures it once (host.Capture, plus the facts
// it reads itself: InitPath, SubIDs, the workspace's sockets); tests fill
// it by hand. Resolve reads the host only through it, which keeps planning
// free of side effects. What the launcher chooses for the run (its id,
// directory, gateway token, target) is not a host fact: it is Run.
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
	// InitPath is agentbox-init on the host where the sandbox's ids can
	// reach it (the launcher copies it there after planning when it must),
	// bound read-only into the sandbox as its first process; empty runs the
	// command directly.
	InitPath string
	// SubIDs are the invoking user's subordinate ids, which decide a
	// rootless sandbox's id map (IDMode); unused as root.
	SubIDs SubIDs
	// WorkspaceSockets are the pathname unix sockets in the workspace,
	// relative to it: those workspace.Inspect found, and the one the
	// launcher will plant there as a canary; the plan covers each. Nil:
	// none, or the workspace was not inspected.
	WorkspaceSockets []string
	// LandlockABI is the kernel's Landlock ABI, 0 without Landlock; at 9
	// and later Landlock also refuses connecting to sockets made outside
	// the sandbox.
	LandlockABI int
	// Runtimes are the runtimes of DefaultRuntimes found on the launcher's
	// PATH, with the verdict of their last self-test here; the plan chooses
	// among them when the policy names no runtime (ChooseRuntime). Nil:
	// none found, and then the plan asks for runc.
	Runtimes []InstalledRuntime
	// HybridCgroup is true on a hybrid cgroup layout whose v2 hierarchy
	// holds controllers beside the v1 ones: crun refuses it, and only root
	// can hide it from crun (engine.HiddenUnified).
	HybridCgroup bool
	// OS is the host's operating system as Go names it (runtime.GOOS):
	// "" or "linux" for Linux, OSDarwin for macOS, whose TargetUser plan has
	// its own layers (userdarwin.go).
	OS string
	// Account is the dedicated account agentbox-agent (TargetUser); nil
	// when it does not exist or the plan is for another target.
	Account *UserAccount
	// FS reads paths: stat, symlink resolution and PATH lookup.
	FS FS
}

// SubIDs are the facts of /etc/subuid, /etc/subgid and the uidmap package
// for the invoking user: its first subordinate uid and gid ranges (Count 0
// when it has none) and whether newuidmap and newgidmap are installed.
// With both ranges and the tools, a rootless sandbox maps container ids
// 0..Count-1 onto the ranges (IDSubIDs); without, it has the user's own ids
// only (IDSingle), and the plan records the residual rootless-single-id.
type SubIDs struct {
	// User is the invoking user's name, for the fix the residual names.
	User     string
	UID, GID IDRange
	NewIDMap bool
}

// IDRange is a range of host ids: Start and the Count ids above it.
type IDRange struct {
	Start uint32 `json:"start"`
	Count uint32 `json:"count"`
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
	// ReadHead returns at most n bytes from the start of the file at path,
	// following symlinks: a script's #! line, a venv's pyvenv.cfg. A file
	// shorter than n is returned whole, without an error.
	ReadHead(path string, n int) ([]byte, error)
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
